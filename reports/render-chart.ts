/**
 * One Vega-Lite spec -> three files next to each other: `<base>.vl.json` (the spec, data inline),
 * `<base>.svg` (Vega's headless View, no browser), `<base>.png` (resvg, at twice the SVG size).
 * Nothing is fetched: a spec that points at data by URL is refused.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { renderAsync } from '@resvg/resvg-js';
import { parse, View, type Spec as VegaSpec } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { pngFont } from './png-font.js';
import { prettyJson } from './pretty-json.js';

export interface RenderedChart {
  specPath: string;
  svgPath: string;
  pngPath: string;
  svg: string;
}

/** The PNG is drawn at this multiple of the SVG's pixel size, for sharp text on high-DPI screens. */
export const PNG_SCALE = 2;

/**
 * Vega-Lite -> Vega. The spec is copied first: Vega tags every data object it ingests with a
 * symbol id, and the caller's spec must come back as it went in.
 */
export function compileToVega(spec: TopLevelSpec): VegaSpec {
  assertInlineData(spec);
  return compile(structuredClone(spec)).spec;
}

export async function svgFromVegaLite(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compileToVega(spec)), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export async function pngFromSvg(svg: string): Promise<Buffer> {
  const image = await renderAsync(svg, {
    fitTo: { mode: 'zoom', value: PNG_SCALE },
    background: 'white',
    font: pngFont().font,
  });
  return image.asPng();
}

export async function renderChart(spec: TopLevelSpec, outBase: string): Promise<RenderedChart> {
  return (await renderCharts([{ spec, outBase }]))[0];
}

/**
 * Several charts, in order, each as renderChart writes it, with the PNG of one chart drawn (on
 * resvg's thread) while the next chart's SVG is laid out: at most one PNG in flight.
 */
export async function renderCharts(charts: readonly { spec: TopLevelSpec; outBase: string }[]): Promise<RenderedChart[]> {
  const out: RenderedChart[] = [];
  let drawing: Promise<void> | undefined;
  try {
    for (const { spec, outBase } of charts) {
      const specPath = `${outBase}.vl.json`;
      const svgPath = `${outBase}.svg`;
      const pngPath = `${outBase}.png`;
      const svg = await svgFromVegaLite(spec);
      mkdirSync(dirname(outBase), { recursive: true });
      writeFileSync(specPath, prettyJson(spec));
      writeFileSync(svgPath, svg);
      await drawing;
      drawing = pngFromSvg(svg).then((png) => writeFileSync(pngPath, png));
      // (a failure is taken where the PNG is awaited, not as an unhandled rejection meanwhile)
      drawing.catch(() => undefined);
      out.push({ specPath, svgPath, pngPath, svg });
    }
    await drawing;
  } catch (e) {
    // the PNG in flight finishes before the error goes on
    await drawing?.catch(() => undefined);
    throw e;
  }
  return out;
}

/** Reports must render offline, so every `data` must carry its `values`. */
function assertInlineData(node: unknown, path = 'spec'): void {
  if (Array.isArray(node)) {
    node.forEach((n, i) => assertInlineData(n, `${path}[${i}]`));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'data' && v && typeof v === 'object' && 'url' in v) {
      throw new Error(
        `renderChart: ${path}.data has a url (${String((v as { url: unknown }).url)}); ` +
          'reports render offline, so inline the data as `values`',
      );
    }
    if (k !== 'values') assertInlineData(v, `${path}.${k}`);
  }
}
