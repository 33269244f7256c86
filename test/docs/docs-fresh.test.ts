/**
 * The generated sections of docs/*.md are what the code gives now (run `npm run docs` when this
 * fails), every section the generator knows appears in some page, the pages' relative links point
 * at files that exist, and the marker handling itself: filling, keeping a section whose source is
 * missing, refusing unknown and unclosed markers.
 */
import * as fs from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages, fillPage, generateAll, sectionsIn, sectionText, SECTIONS } from '../../docs/generate.js';
import { unitOf } from '../../docs/sections/hardware.js';
import { documentedFields, interfaceFields } from '../../docs/sections/interface-fields.js';
import { cell } from '../../docs/sections/markdown.js';
import { loadHil } from '../../hil/load-addon.js';

const generated = generateAll();
const pages = docPages().map((file) => ({ file, name: basename(file), text: fs.readFileSync(file, 'utf8') }));
const placed = pages.flatMap((p) => sectionsIn(p.text).map((section) => ({ page: p, section })));

describe('docs: generated sections', () => {
  it('every section the generator knows is placed in a page', () => {
    expect(new Set(placed.map((x) => x.section))).toEqual(new Set(Object.keys(SECTIONS)));
    expect(placed.length).toBeGreaterThanOrEqual(Object.keys(SECTIONS).length);
  });

  it.each(placed.map((x) => [x.page.name, x.section, x.page.text] as const))('%s: section "%s" is what the code gives now (else: npm run docs)', (_name, section, text) => {
    const now = generated[section];
    if (now === null) {
      // only the addon's option table may be unavailable, and only where the addon does not load
      expect(section).toBe('hil-options');
      expect(loadHil().ok).toBe(false);
      console.warn(`docs-fresh: section ${section} not checked: the HIL addon does not load here`);
      return;
    }
    expect(sectionText(text, section)).toBe(now);
  });

  it('the CLI section holds every command\'s help, flag by flag', () => {
    const cli = generated.cli!;
    for (const flag of ['--hbm-budget <x>', '--copy-mode <mode>', '--dry-run', '--shard <i/N>', '--repeat <n>', '--no-file-remeasure', '--attn <KEY=VALUE>', '--capacity-tokens <n>']) {
      expect(cli).toContain(flag);
    }
    for (const cmd of ['### kvtier trace gen', '### kvtier sweep merge', '### kvtier hil compare', '### kvtier hil options', '### kvtier serve']) expect(cli).toContain(`\n${cmd}\n`);
  });
});

describe('docs: links', () => {
  // [text](target) where target is a relative path (optionally with #anchor)
  const links = pages.flatMap((p) =>
    [...p.text.matchAll(/\]\(([^)#\s]+)(#[^)\s]*)?\)/g)]
      .map((m) => ({ page: p.name, target: m[1], anchor: m[2] }))
      .filter((l) => !/^[a-z]+:/.test(l.target)),
  );

  it.each(links.map((l) => [l.page, l.target, l.anchor ?? ''] as const))('%s -> %s%s exists', (page, target, anchor) => {
    const path = resolve(dirname(join(pages[0].file)), target);
    expect(fs.existsSync(path), `${page}: link to ${target}`).toBe(true);
    if (anchor && path.endsWith('.md')) {
      const slugs = [...fs.readFileSync(path, 'utf8').matchAll(/^#+ (.*)$/gm)].map((m) =>
        m[1]
          .toLowerCase()
          .replace(/[^a-z0-9 _-]/g, '')
          .replace(/ /g, '-'),
      );
      expect(slugs, `${page}: anchor ${anchor} in ${target}`).toContain(anchor.slice(1));
    }
  });
});

describe('docs: the generator', () => {
  const gen = { a: 'new A', b: null };

  it('fills a section between its markers and keeps the text around it', () => {
    const page = 'intro\n<!-- generated:a -->\nold\nlines\n<!-- /generated:a -->\noutro\n';
    expect(fillPage('p.md', page, gen)).toBe('intro\n<!-- generated:a -->\nnew A\n<!-- /generated:a -->\noutro\n');
    // an empty section is filled too, and filling is idempotent
    const empty = 'x\n<!-- generated:a -->\n<!-- /generated:a -->\n';
    const filled = fillPage('p.md', empty, gen);
    expect(filled).toBe('x\n<!-- generated:a -->\nnew A\n<!-- /generated:a -->\n');
    expect(fillPage('p.md', filled, gen)).toBe(filled);
    expect(sectionText(filled, 'a')).toBe('new A');
    expect(sectionText(empty, 'a')).toBe('');
  });

  it('keeps a section whose source is unavailable as it is', () => {
    const page = '<!-- generated:b -->\nkept\n<!-- /generated:b -->\n';
    expect(fillPage('p.md', page, gen)).toBe(page);
  });

  it('refuses an unknown section, naming the page and the known ones, and an unclosed one', () => {
    expect(() => fillPage('docs/x.md', '<!-- generated:zzz -->\n<!-- /generated:zzz -->\n', gen)).toThrow('docs/x.md: unknown generated section "zzz" (known: a, b)');
    expect(() => fillPage('docs/x.md', '<!-- generated:a -->\ntext\n', gen)).toThrow('docs/x.md: generated section "a" has no closing <!-- /generated:a -->');
  });

  it('reads units from field names', () => {
    expect([unitOf('read_GBps'), unitOf('GBps'), unitOf('alpha_us'), unitOf('capacity_GiB'), unitOf('fp16_TFLOPs'), unitOf('kind')]).toEqual([
      'GB/s (10^9 bytes/s)',
      'GB/s (10^9 bytes/s)',
      'µs',
      'GiB (2^30 bytes)',
      'TFLOP/s (10^12 FLOP/s)',
      '',
    ]);
  });

  it('takes an interface\'s fields with their doc comments', () => {
    const src = 'export interface P {\n  /** one line; default 1 */\n  a_b: number;\n  /**\n   * two\n   * lines\n   */\n  c: string;\n  d: number;\n}\n';
    expect(documentedFields(src, 'P')).toEqual([
      { name: 'a_b', doc: 'one line; default 1' },
      { name: 'c', doc: 'two lines' },
    ]);
    // every field, nested objects skipped, an index signature named by its key
    const nested = 'export interface Q {\n  x: { y: number; z: number };\n  w?: {\n    inner: number;\n  };\n  /** rest */\n  [extra: string]: unknown;\n}\nexport interface R {\n  r: number;\n}\n';
    expect(interfaceFields(nested, 'Q')).toEqual([
      { name: 'x', doc: '' },
      { name: 'w', doc: '' },
      { name: '[extra]', doc: 'rest' },
    ]);
    expect(() => interfaceFields(nested, 'S', 'f.ts')).toThrow('f.ts: no "export interface S"');
  });

  it('escapes table cells: pipes, line breaks, angle brackets outside code spans', () => {
    expect(cell('a | b\n  c <link> `<x>` d')).toBe('a \\| b c &lt;link&gt; `<x>` d');
  });
});
