/**
 * The fitted presets reproduce their target statistics (the captured reference traces, stored in
 * traces/fit/fitted.json) within the tolerances stated here, as layer means; the preset numbers
 * are fitted.json's; and the needle preset retrieves in the captured layers with the captured mass.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSteps } from '../../traces/generator.js';
import { PRESETS, needleBlock, resolveGeneratorParams } from '../../traces/generator-params.js';
import { generatedStats } from '../../traces/fit/fit-generator.js';
import { FIT_STATS, layerMeans } from '../../traces/fit/stat-targets.js';
import { REPO } from './python-env.js';

const fitted = JSON.parse(fs.readFileSync(path.join(REPO, 'traces/fit/fitted.json'), 'utf8'));
const brown = fitted.presets['captured-brown'];
const needle = fitted.presets['captured-brown-needle'];

/** |generated - captured| allowed per statistic (layer means); 'ratio' = within a factor. */
export const TOLERANCE: Record<string, { abs?: number; ratio?: number }> = {
  sink: { abs: 0.01 },
  cover50: { ratio: 2 },
  cover90: { ratio: 2.5 },
  cover99: { ratio: 2 },
  sparsity: { abs: 0.03 },
  persistence: { abs: 0.08 },
  entropy: { abs: 0.35 },
  last1: { abs: 0.05 },
  last4: { abs: 0.08 },
  last16: { abs: 0.1 },
};

describe('fitted generator presets', () => {
  it('captured-brown holds the parameters fitted.json records', () => {
    expect(PRESETS['captured-brown']).toEqual(brown.params);
    const { needle: n, ...rest } = PRESETS['captured-brown-needle'];
    expect(rest).toEqual(brown.params);
    expect(n).toEqual(needle.needle);
  });

  it('captured-brown reproduces brown-long-8k.kvt\'s layer-mean statistics within the stated tolerances', () => {
    const gen = layerMeans(generatedStats(fitted.shape, { preset: 'captured-brown' }, fitted.fit_steps, 1));
    const cap = brown.captured_mean as number[];
    FIT_STATS.forEach((d, i) => {
      const t = TOLERANCE[d.key]!;
      const g = gen[i]!;
      const c = cap[i]!;
      if (t.abs !== undefined) expect(Math.abs(g - c), `${d.key}: generated ${g}, captured ${c}`).toBeLessThanOrEqual(t.abs);
      if (t.ratio !== undefined) expect(Math.max(g / c, c / g), `${d.key}: generated ${g}, captured ${c}`).toBeLessThanOrEqual(t.ratio);
    });
  });

  it('captured-brown-needle puts the captured mass on the needle in the captured layers', () => {
    const shape = { ...fitted.shape, steps: 8, seed: 1, preset: 'captured-brown-needle' as const, encoding: 'topk' as const };
    const p = resolveGeneratorParams(shape);
    const b = needleBlock(p.needle!, p);
    const G = p.kv_groups;
    const mass = new Array<number>(p.layers).fill(0);
    let steps = 0;
    for (const s of generateSteps(shape)) {
      if (s.step >= needle.needle.steps) break;
      s.layers.forEach((row, i) => {
        for (let k = 0; k < row.mass.length; k++) if ((row.idx === null ? k : row.idx[k]) === b) mass[Math.floor(i / G)]! += row.mass[k]! / G;
      });
      steps++;
    }
    for (let l = 0; l < p.layers; l++) {
      const m = mass[l]! / steps;
      if (needle.needle.layers.includes(l)) expect(Math.abs(m - needle.needle.mass), `layer ${l}`).toBeLessThanOrEqual(0.05);
      else expect(m, `layer ${l}`).toBeLessThan(0.05);
    }
  });
});
