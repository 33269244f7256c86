/**
 * Calibrate the generator against the captured reference traces and write traces/fit/fitted.json
 * (the fitted parameters, the captured and generated statistics per layer, and the residuals):
 *
 *     npx tsx traces/fit/fit-captured.ts [--evals 300] [--steps 64]
 *
 * `captured-brown` is fitted to traces/captured/brown-long-8k.kvt. `captured-brown-needle` adds a
 * needle to it with the retrieval layers and mass measured on brown-needle-8k-d50.kvt. The numbers
 * in PRESETS (traces/generator-params.ts) are these, rounded; test/capture/presets.test.ts checks
 * that the presets still reproduce the captured statistics within the tolerances in fitted.json.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, relative } from 'node:path';
import { readTraceHeader } from '../trace-reader.js';
import { computeTraceStats } from '../trace-stats.js';
import { fitGenerator, type FitShape } from './fit-generator.js';
import { needleProfile } from './needle-profile.js';
import { FIT_STATS, layerMeans, statTable } from './stat-targets.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const evals = arg('--evals', 300);
const steps = arg('--steps', 64);

const longPath = join(root, 'traces/captured/brown-long-8k.kvt');
const needlePath = join(root, 'traces/captured/brown-needle-8k-d50.kvt');
const h = readTraceHeader(longPath);
const shape: FitShape = { layers: h.layers, kv_groups: h.kv_groups, block_size: h.block_size, prompt_tokens: h.prompt_tokens, topk: h.topk ?? 64 };
const target = statTable(computeTraceStats(longPath));
const t0 = performance.now();
const fit = fitGenerator(target, shape, { steps, maxEvals: evals, log: (l) => process.stderr.write(`\r${l}   `) });
process.stderr.write('\n');
const round = (v: number) => Number(v.toPrecision(3));
const params = Object.fromEntries(Object.entries(fit.params).map(([k, v]) => [k, round(v)]));

const np = needleProfile(needlePath);
const needleLayers = np.massByLayer.flatMap((m, l) => (m > 0.05 ? [l] : []));
const needleMass = round(needleLayers.reduce((s, l) => s + np.massByLayer[l]!, 0) / Math.max(1, needleLayers.length));

const rel = (p: string) => relative(root, p);
const out = {
  what: 'generator presets fitted to the captured reference traces (traces/fit/fit-captured.ts)',
  command: `npx tsx traces/fit/fit-captured.ts --evals ${evals} --steps ${steps}`,
  shape,
  fit_steps: steps,
  stats: FIT_STATS.map((d) => ({ key: d.key, label: d.label, kind: d.kind, scale: d.scale })),
  presets: {
    'captured-brown': {
      source: rel(longPath),
      params,
      loss: round(fit.loss),
      start_loss: round(fit.startLoss),
      evals: fit.evals,
      seconds: Math.round((performance.now() - t0) / 1000),
      captured: target,
      generated: fit.stats,
      captured_mean: layerMeans(target),
      generated_mean: layerMeans(fit.stats),
    },
    'captured-brown-needle': {
      source: rel(needlePath),
      needle: { depth: np.depth, from_step: 0, steps: np.answerSteps, mass: needleMass, layers: needleLayers },
      captured_needle_mass_by_layer: np.massByLayer.map(round),
    },
  },
};
writeFileSync(join(here, 'fitted.json'), JSON.stringify(out, null, 1) + '\n');
console.log(JSON.stringify({ params, needle: out.presets['captured-brown-needle'].needle, loss: fit.loss, start: fit.startLoss, evals: fit.evals }));
const lm = layerMeans(target);
const gm = layerMeans(fit.stats);
for (let i = 0; i < FIT_STATS.length; i++) console.log(`${FIT_STATS[i]!.key.padEnd(12)} captured ${lm[i]!.toFixed(3).padStart(8)}  generated ${gm[i]!.toFixed(3).padStart(8)}`);
