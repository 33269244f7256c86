import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderAsync } from '@resvg/resvg-js';
import { afterAll, describe, expect, it } from 'vitest';
import type { TopLevelSpec } from 'vega-lite';
import { pngFont } from '../../reports/png-font.js';
import { PNG_SCALE, renderChart, renderCharts } from '../../reports/render-chart.js';
import { sweepCharts } from '../../reports/sweep-charts.js';
import { sweepRows } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-render-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(buf: Buffer): { width: number; height: number } {
  expect([...buf.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(buf.subarray(12, 16).toString('ascii')).toBe('IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

describe('renderChart', () => {
  it('writes the spec, an SVG with the axis titles and legend, and a PNG at twice the size', async () => {
    const spec = sweepCharts(sweepRows()).find((c) => c.name === 'tbt-vs-budget')!.spec;
    const out = await renderChart(spec, join(dir, 'nested', 'tbt'));
    expect(out.specPath).toBe(join(dir, 'nested', 'tbt.vl.json'));
    expect(JSON.parse(readFileSync(out.specPath, 'utf8'))).toEqual(spec);

    expect(readFileSync(out.svgPath, 'utf8')).toBe(out.svg);
    expect(out.svg.startsWith('<svg')).toBe(true);
    for (const text of ['HBM budget (fraction of FP16 KV)', 'time between tokens (ms)', 'TBT p99', 'oracle (bound)', 'streaming']) {
      expect(out.svg).toContain(text);
    }

    const { width, height } = pngSize(readFileSync(out.pngPath));
    const svgWidth = Number(/<svg[^>]* width="(\d+(?:\.\d+)?)"/.exec(out.svg)![1]);
    expect(width).toBeGreaterThan(0);
    expect(height).toBeGreaterThan(0);
    expect(width).toBe(Math.round(svgWidth * PNG_SCALE));
  });

  it('is deterministic: the same spec gives the same SVG', async () => {
    const spec = sweepCharts(sweepRows())[2]!.spec;
    const a = await renderChart(spec, join(dir, 'a'));
    const b = await renderChart(spec, join(dir, 'b'));
    expect(a.svg).toBe(b.svg);
    expect(readFileSync(a.pngPath).equals(readFileSync(b.pngPath))).toBe(true);
  });

  it('several charts at once (one PNG drawn while the next is laid out) write what each alone writes', async () => {
    const charts = sweepCharts(sweepRows()).slice(0, 3);
    const together = await renderCharts(charts.map((c) => ({ spec: c.spec, outBase: join(dir, 'many', c.name) })));
    expect(together.map((r) => r.specPath)).toEqual(charts.map((c) => join(dir, 'many', `${c.name}.vl.json`)));
    for (const [i, c] of charts.entries()) {
      const alone = await renderChart(c.spec, join(dir, 'one', c.name));
      expect(together[i].svg).toBe(alone.svg);
      for (const k of ['specPath', 'svgPath', 'pngPath'] as const) expect(readFileSync(together[i][k]).equals(readFileSync(alone[k])), `${c.name} ${k}`).toBe(true);
    }
    // a chart that fails stops the rest; the PNG already in flight is finished first
    const bad = { data: { url: 'https://example.com/x.csv' }, mark: 'point' } as TopLevelSpec;
    await expect(renderCharts([{ spec: charts[0].spec, outBase: join(dir, 'stop', 'first') }, { spec: bad, outBase: join(dir, 'stop', 'bad') }, { spec: charts[1].spec, outBase: join(dir, 'stop', 'third') }])).rejects.toThrow(/inline the data/);
    expect(existsSync(join(dir, 'stop', 'first.png'))).toBe(true);
    expect(existsSync(join(dir, 'stop', 'third.vl.json'))).toBe(false);
  });

  it('refuses data by URL (reports render offline) and writes nothing', async () => {
    const spec = { data: { url: 'https://example.com/x.csv' }, mark: 'point' } as TopLevelSpec;
    await expect(renderChart(spec, join(dir, 'url'))).rejects.toThrow(/inline the data/);
    expect(existsSync(join(dir, 'url.vl.json'))).toBe(false);
  });

  it('draws text in the PNG: the font chosen for sans-serif has glyphs', async (ctx) => {
    const choice = pngFont();
    if (!choice.anyFont) ctx.skip(); // no font on this machine: PNGs have no text (a warning says so)
    const svg = (body: string) =>
      `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><rect width="200" height="40" fill="white"/>${body}</svg>`;
    const dark = async (s: string) => {
      const img = await renderAsync(s, { font: choice.font });
      let n = 0;
      for (let i = 0; i < img.pixels.length; i += 4) if (img.pixels[i]! < 128) n++;
      return n;
    };
    expect(await dark(svg(''))).toBe(0);
    expect(await dark(svg('<text x="5" y="28" font-family="sans-serif" font-size="20">Budget 10%</text>'))).toBeGreaterThan(50);
  });
});
