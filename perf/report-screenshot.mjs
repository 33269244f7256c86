#!/usr/bin/env node
/**
 * Opens a report page (index.html, from file://) in Debian's Chromium through playwright-core and
 * writes PNG screenshots at a desktop and a phone width, plus what the page showed: console
 * errors, failed requests (none may happen: the page must work offline), and a few checks.
 *
 *   node perf/report-screenshot.mjs [reportDir=reports/quickstart] [outDir=lab/screenshots]
 *
 * Writes <outDir>/report-<width>.png (first screen), report-<width>-<section>.png (the Pareto chart,
 * the time-between-tokens chart, the bytes chart and the results table, each alone) and
 * report-check.json (what the page showed).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Loads the page at each width and returns what it saw; with `outDir`, also writes the PNGs.
 * Every request other than file:// and data: is aborted and listed in `blocked`. The results table
 * is sorted by TBT p50 (descending: `sortedTbt` holds the first three cells) and filtered by
 * `filter` (`filtered` holds the row count it showed).
 */
export async function inspectReport(indexHtml, { outDir, widths = [1400, 390], filter = 'h100 quest' } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium`);
  if (!existsSync(indexHtml)) throw new Error(`${indexHtml} not found: write the report first (npm run quickstart)`);
  const profile = mkdtempSync(join(tmpdir(), 'kvtier-chromium-'));
  // a fresh profile directory (--user-data-dir) each time, removed afterwards
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
  const result = { url: pathToFileURL(resolve(indexHtml)).href, widths: {} };
  try {
    for (const width of widths) {
      const page = await browser.newPage();
      await page.setViewportSize({ width, height: width < 600 ? 844 : 900 });
      const errors = [];
      const blocked = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.route('**/*', (route) => {
        const u = route.request().url();
        if (u.startsWith('file:') || u.startsWith('data:')) return route.continue();
        blocked.push(u);
        return route.abort();
      });
      await page.goto(result.url, { waitUntil: 'load' });
      const seen = await page.evaluate(() => {
        const pareto = document.querySelector('#speed-against-recall svg');
        const table = document.querySelector('table.sortable');
        return {
          title: document.title,
          recommendation: document.querySelector('#which-policy-at-which-hbm-budget')?.textContent ?? '',
          slowPolicies: document.querySelector('#far-slower-than-the-others')?.textContent ?? '',
          paretoSvg: Boolean(pareto && pareto.getBoundingClientRect().width > 100),
          svgs: document.querySelectorAll('svg').length,
          sortableRows: table ? table.tBodies[0].rows.length : 0,
          // the page itself must not scroll sideways (wide charts and tables scroll in their own box)
          pageOverflowX: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        };
      });
      // sort the results by TBT p50, descending, and filter: checks the script works
      let sortedTbt = [];
      let filtered = '';
      if (seen.sortableRows > 0) {
        const head = page.locator('table.sortable th', { hasText: 'TBT p50 (ms)' }).first();
        await head.click();
        await head.click();
        sortedTbt = await page.$$eval('table.sortable tbody tr', (rows) => {
          const th = [...document.querySelectorAll('table.sortable th')].findIndex((h) => h.textContent.startsWith('TBT p50'));
          return rows.slice(0, 3).map((r) => r.cells[th].textContent);
        });
        await page.fill('input.table-filter', filter);
        filtered = await page.textContent('.table-count');
        await page.fill('input.table-filter', '');
        await head.click(); // back to ascending for the picture
        await page.evaluate(() => {
          for (const w of document.querySelectorAll('.table-wrap')) w.scrollLeft = 0;
          window.scrollTo(0, 0);
        });
      }
      if (outDir) {
        mkdirSync(outDir, { recursive: true });
        await page.screenshot({ path: join(outDir, `report-${width}.png`) });
        // sections a reader looks at, each its own small picture
        for (const [id, name] of [
          ['speed-against-recall', 'pareto'],
          ['far-slower-than-the-others', 'slow'],
          ['time-between-tokens', 'tbt'],
          ['bytes-moved', 'bytes'],
          ['results', 'results'],
        ]) {
          const box = await page.locator(`#${id}`).boundingBox();
          if (!box) continue;
          // at most 1000 px of it: the top of a long table is enough to see
          const clip = { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 1000) };
          await page.screenshot({ path: join(outDir, `report-${width}-${name}.png`), clip, fullPage: true });
        }
      }
      result.widths[width] = { ...seen, errors, blocked, sortedTbt, filtered };
      await page.close();
    }
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  if (outDir) writeFileSync(join(outDir, 'report-check.json'), JSON.stringify(result, null, 2) + '\n');
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const reportDir = process.argv[2] ?? 'reports/quickstart';
  const outDir = process.argv[3] ?? 'lab/screenshots';
  const r = await inspectReport(join(reportDir, 'index.html'), { outDir });
  for (const [w, s] of Object.entries(r.widths)) {
    console.log(
      `${w}px: ${s.svgs} SVGs, Pareto chart ${s.paretoSvg ? 'drawn' : 'MISSING'}, ${s.sortableRows} table rows, ` +
        `sideways overflow ${s.pageOverflowX}px, ${s.errors.length} console errors, ${s.blocked.length} blocked requests`,
    );
  }
  console.log(`wrote ${outDir}/report-*.png`);
}
