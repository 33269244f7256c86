import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatNumber } from '../../reports/format-cell.js';
import { formatBytes, formatPercent } from '../../reports/format-units.js';
import { markdownToHtml } from '../../reports/mini-markdown.js';
import { renderReportPage, writeReportPage } from '../../reports/report-page.js';
import { scopeSvgIds } from '../../reports/svg-scope-ids.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-page-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EVIL = '<script>alert("x")</script>';

describe('writeReportPage', () => {
  it('writes outDir/index.html and returns its path', () => {
    const path = writeReportPage(join(dir, 'new', 'sub'), { title: 'T', sections: [] });
    expect(path).toBe(join(dir, 'new', 'sub', 'index.html'));
    expect(readFileSync(path, 'utf8')).toMatch(/^<!DOCTYPE html>/);
  });

  it('escapes <script> in every text field', () => {
    const html = readFileSync(
      writeReportPage(dir, {
        title: EVIL,
        subtitle: EVIL,
        generatedBy: EVIL,
        sections: [
          {
            heading: EVIL,
            markdown: `para ${EVIL} **b${EVIL}** \`${EVIL}\`\n\n- item ${EVIL}`,
            chart: { svg: '<svg></svg>', specFile: 'c/x".vl.json', pngFile: 'c/x.png', caption: EVIL },
            table: { columns: [EVIL], rows: [[EVIL], [null]] },
          },
        ],
      }),
      'utf8',
    );
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).toContain('href="c/x%22.vl.json"');
  });

  it('is self-contained: inline CSS and SVG, no external scripts, fonts or stylesheets', () => {
    const html = renderReportPage({
      title: 'Sweep',
      sections: [{ heading: 'Chart', chart: { svg: '<svg width="10"><rect/></svg>', specFile: 'charts/a.vl.json', pngFile: 'charts/a.png' } }],
    });
    expect(html).toContain('<style>');
    expect(html).toContain('<svg width="10"><rect/></svg>');
    expect(html).toContain('<a href="charts/a.vl.json">Vega-Lite spec</a>');
    expect(html).toContain('<a href="charts/a.png">PNG</a>');
    expect(html).not.toMatch(/<script|<link|@import|@font-face|https?:\/\//);
  });

  it('is deterministic (no timestamp) and gives sections unique anchors', () => {
    const page = { title: 'x', sections: [{ heading: 'Results' }, { heading: 'Results' }, { heading: '!!' }] };
    const a = renderReportPage(page);
    expect(renderReportPage(page)).toBe(a);
    expect(a).toContain('<section id="results">');
    expect(a).toContain('<section id="results-2">');
    expect(a).toContain('<section id="section">');
    expect(a).not.toMatch(/20\d\d-\d\d-\d\d/);
  });

  it('formats numbers in tables and right-aligns numeric columns', () => {
    const html = renderReportPage({
      title: 'x',
      sections: [
        {
          heading: 't',
          table: { columns: ['policy', 'p50', 'share', 'n'], rows: [['h2o', 12.3456, '12.5%', 1234567], ['q', null, '—', Number.NaN]] },
        },
      ],
    });
    expect(html).toContain('<th>policy</th><th class="num">p50</th><th class="num">share</th><th class="num">n</th>');
    expect(html).toContain('<td>h2o</td><td class="num">12.35</td><td class="num">12.5%</td><td class="num">1,234,567</td>');
    expect(html).toContain('<td>q</td><td class="num">—</td><td class="num">—</td><td class="num">—</td>');
  });

  it('scopes SVG ids so that several inlined charts do not share clip paths', () => {
    const svg = '<svg><defs><clipPath id="clip1"><rect/></clipPath></defs><g clip-path="url(#clip1)"></g></svg>';
    const html = renderReportPage({
      title: 'x',
      sections: [
        { heading: 'a', chart: { svg, specFile: 'a', pngFile: 'a' } },
        { heading: 'b', chart: { svg, specFile: 'b', pngFile: 'b' } },
      ],
    });
    expect(html).toContain('id="c0-clip1"');
    expect(html).toContain('url(#c1-clip1)');
    expect(html).not.toContain('"clip1"');
    expect(scopeSvgIds('<svg><use href="#g1"/><g id="g1"/></svg>', 's')).toBe('<svg><use href="#s-g1"/><g id="s-g1"/></svg>');
  });
});

describe('interactive tables', () => {
  const table = { columns: ['policy', 'TBT p50 (ms)'], rows: [[EVIL, 2], ['h2o', 10]] as (string | number)[][] };

  it('a sortable, filterable table brings the page\'s one script, a filter box and a row count; its cells stay escaped', () => {
    const html = renderReportPage({ title: 'T', sections: [{ heading: 'R', table: { ...table, interactive: true } }] });
    expect(html).toContain('<table class="sortable">');
    expect(html).toContain('<input type="search" class="table-filter"');
    expect(html).toContain('<span class="table-count">2 rows</span>');
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html.indexOf('<script>')).toBeGreaterThan(html.indexOf('</main>'));
    expect(html).toContain('<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>');
    // nothing is fetched: no src, no url
    expect(html).not.toMatch(/<script[^>]*src=/);
  });

  it('a plain table has no script and no filter box', () => {
    const html = renderReportPage({ title: 'T', sections: [{ heading: 'R', table }] });
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<input');
    expect(html).toContain('<table>');
  });
});

describe('mini markdown', () => {
  it('renders paragraphs, lists, bold and code, and nothing else', () => {
    expect(markdownToHtml('Hello **world** and `a**b**`.\nsecond line\n\n- one\n- two **2**\n\n# not a heading')).toBe(
      [
        '<p>Hello <strong>world</strong> and <code>a**b**</code>.\nsecond line</p>',
        '<ul>\n<li>one</li>\n<li>two <strong>2</strong></li>\n</ul>',
        '<p># not a heading</p>',
      ].join('\n'),
    );
  });
});

describe('number and unit formatting', () => {
  it('formats numbers for people, independent of locale', () => {
    expect([0, 7, 1234567, -1234, 12.3456, 123.456, 1234.5, 0.98765, 0.012345, 0.00001234, Number.NaN, Infinity].map(formatNumber)).toEqual(
      ['0', '7', '1,234,567', '−1,234', '12.35', '123.5', '1,235', '0.988', '0.0123', '1.23e-5', '—', '∞'],
    );
  });

  it('formats bytes in binary units and budgets as percentages', () => {
    expect([0, 1023, 1024, 1536 * 1024, 5 * 1024 ** 3].map(formatBytes)).toEqual(['0 B', '1023 B', '1.00 KiB', '1.50 MiB', '5.00 GiB']);
    expect([0.1, 0.125, 0.5, 1, 1 / 3].map(formatPercent)).toEqual(['10%', '12.5%', '50%', '100%', '33.33%']);
  });
});
