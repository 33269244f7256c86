/**
 * A self-contained HTML report page: inline CSS, inline SVG charts (with links to the Vega-Lite
 * spec and PNG beside them), tables, and a tiny Markdown subset. All text is escaped; only
 * `html` sections and chart SVG (which Vega escapes itself) are inserted as given. The page holds
 * no timestamp unless the caller passes one in `generatedBy`, so the same input gives the same bytes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatCell } from './format-cell.js';
import { escapeHtml } from './html-escape.js';
import { inlineMarkdown, markdownToHtml } from './mini-markdown.js';
import { REPORT_CSS } from './report-css.js';
import { scopeSvgIds } from './svg-scope-ids.js';
import { TABLE_SCRIPT } from './table-script.js';

export interface PageSection {
  heading: string;
  /** paragraphs, `- ` lists, **bold** and `code`; escaped */
  markdown?: string;
  /** trusted HTML, inserted as is */
  html?: string;
  /** `specFile` and `pngFile` are relative to the page's directory */
  chart?: { svg: string; specFile: string; pngFile: string; caption?: string };
  /** `interactive`: sortable by any column and filterable by typed words (the page's one inline script) */
  table?: { columns: string[]; rows: (string | number | null)[][]; interactive?: boolean };
}

export interface ReportPage {
  title: string;
  subtitle?: string;
  /** footer text, e.g. the command line and a timestamp the caller chose to record */
  generatedBy?: string;
  sections: PageSection[];
}

export function writeReportPage(outDir: string, page: ReportPage): string {
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, 'index.html');
  writeFileSync(path, renderReportPage(page));
  return path;
}

export function renderReportPage(page: ReportPage): string {
  const used = new Set<string>();
  const body = page.sections.map((s, i) => renderSection(s, i, used)).join('\n');
  const script = page.sections.some((s) => s.table?.interactive) ? `<script>${TABLE_SCRIPT}</script>` : '';
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(page.title)}</title>`,
    `<style>${REPORT_CSS}</style>`,
    '</head>',
    '<body>',
    '<header>',
    `<h1>${escapeHtml(page.title)}</h1>`,
    page.subtitle ? `<p class="subtitle">${inlineMarkdown(page.subtitle)}</p>` : '',
    '</header>',
    '<main>',
    body,
    '</main>',
    page.generatedBy ? `<footer>${inlineMarkdown(page.generatedBy)}</footer>` : '',
    script,
    '</body>',
    '</html>',
    '',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

function renderSection(s: PageSection, index: number, used: Set<string>): string {
  const id = uniqueSlug(s.heading, used);
  const parts = [`<section id="${id}">`, `<h2>${escapeHtml(s.heading)}</h2>`];
  if (s.markdown) parts.push(markdownToHtml(s.markdown));
  if (s.html) parts.push(s.html);
  if (s.chart) parts.push(renderChartFigure(s.chart, `c${index}`));
  if (s.table) parts.push(renderTable(s.table));
  parts.push('</section>');
  return parts.join('\n');
}

function renderChartFigure(chart: NonNullable<PageSection['chart']>, scope: string): string {
  const href = (f: string) => escapeHtml(encodeURI(f.replace(/\\/g, '/')));
  const links =
    `<span class="files">(<a href="${href(chart.specFile)}">Vega-Lite spec</a> · ` +
    `<a href="${href(chart.pngFile)}">PNG</a>)</span>`;
  const caption = chart.caption ? inlineMarkdown(chart.caption) + ' ' : '';
  return [
    '<figure>',
    `<div class="chart">${scopeSvgIds(stripXmlProlog(chart.svg), scope)}</div>`,
    `<figcaption>${caption}${links}</figcaption>`,
    '</figure>',
  ].join('\n');
}

function renderTable(t: NonNullable<PageSection['table']>): string {
  // a column is right-aligned when every non-empty cell in it is a number or reads as one ("12.5%")
  const numeric = t.columns.map(
    (_, c) => t.rows.some((r) => r[c] != null) && t.rows.every((r) => r[c] == null || readsAsNumber(r[c]!)),
  );
  const cls = (c: number) => (numeric[c] ? ' class="num"' : '');
  const head = t.columns.map((h, c) => `<th${cls(c)}>${escapeHtml(h)}</th>`).join('');
  const rows = t.rows
    .map((r) => `<tr>${t.columns.map((_, c) => `<td${cls(c)}>${escapeHtml(formatCell(r[c]))}</td>`).join('')}</tr>`)
    .join('\n');
  const table = `<div class="table-wrap"><table${t.interactive ? ' class="sortable"' : ''}>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table></div>`;
  if (!t.interactive) return table;
  const bar =
    '<div class="table-bar"><input type="search" class="table-filter" placeholder="Filter rows, e.g. h100 quest 20%" aria-label="Filter rows">' +
    `<span class="table-count">${t.rows.length} rows</span><span class="table-hint">click a column header to sort</span></div>`;
  return `${bar}\n${table}`;
}

function readsAsNumber(v: string | number): boolean {
  return typeof v === 'number' || v.trim() === '—' || /^[−+-]?\d[\d,.]*(e[−+-]?\d+)?\s?(%|[KMGTP]?i?B|[mµn]?s|×)?$/.test(v.trim());
}

function stripXmlProlog(svg: string): string {
  return svg.replace(/^\s*<\?xml[^>]*\?>\s*/, '');
}

function uniqueSlug(heading: string, used: Set<string>): string {
  const base =
    heading
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'section';
  let slug = base;
  for (let n = 2; used.has(slug); n++) slug = `${base}-${n}`;
  used.add(slug);
  return slug;
}
