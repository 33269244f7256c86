// On the GPU machine (plain node, compiled JS): one calibration, then hil compare of chosen policies on
// chosen generated traces and budgets, to look at where the simulator's per-step model departs from the
// hardware. Per-step CSVs and compare.json of every cell land under OUTDIR.
//   node perf/device/diag-compare.mjs DIST OUTDIR
// CELLS="prompt:preset:seed:budget:policies;..." (policies joined by +, one option each as name:key=value), REPEAT=n, STEPS=n, QUICK=1,
// BACKEND=host (default cuda), PROFILE=path (a calibrated profile to use instead of calibrating). MODEL=name or model JSON path (default
// llama-3-8b: the model calibrated and simulated; generated cells are Llama-3-8B traces, so another MODEL takes
// file: cells only); a cell "file:PATH:budget:policies" replays the first STEPS
// steps of a stored trace (e.g. a captured one, with MODEL its model JSON) in place of a generated one;
// GROUP_SIZE=n the quantization group (default 128; at most the model's head_dim).
// HELD_OUT="8192,32768,131072": calibrate at points held out from those contexts, as `kvtier hil validate`
// does for its grid (hil/validate/calibration-points.ts), so the cells are simulated with the profile a grid
// with those contexts would calibrate on this lease (default: the calibration's own points).
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outArg] = process.argv.slice(2);
if (!dist || !outArg) throw new Error('usage: node perf/device/diag-compare.mjs DIST OUTDIR');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const out = resolve(outArg);
mkdirSync(out, { recursive: true });
const t0 = performance.now();
const steps = Number(process.env.STEPS ?? 32);
const model = process.env.MODEL ? (process.env.MODEL.endsWith('.json') ? resolve(process.env.MODEL) : process.env.MODEL) : 'llama-3-8b';
const { generateTrace } = await load('traces/generator.js');
const { calibrate, writeCalibration, formatFits } = await load('hil/calibrate/calibrate.js');
if (process.env.PROFILE) {
  // a calibrated profile given (e.g. one a validation grid calibrated at held-out points): no calibration here
  copyFileSync(resolve(process.env.PROFILE), `${out}/profile.json`);
  console.log(`profile ${process.env.PROFILE}`);
} else {
  const backend = process.env.BACKEND ?? 'cuda';
  let points;
  if (process.env.HELD_OUT) {
    const contexts = process.env.HELD_OUT.split(',').map(Number);
    if (!contexts.every((c) => Number.isInteger(c) && c > 0)) throw new Error(`diag-compare: HELD_OUT must be contexts in tokens joined by commas (got ${process.env.HELD_OUT})`);
    const { heldOutPoints } = await load('hil/validate/calibration-points.js');
    points = heldOutPoints(contexts, { quick: process.env.QUICK === '1' && backend === 'host' });
    console.log(`calibration points held out from ${contexts.join(', ')}: ${JSON.stringify(points)}`);
  }
  const cal = await calibrate({ backend, base: 'h100-pcie5', model, fileDir: '/tmp', quick: process.env.QUICK === '1', ...(points ? { points } : {}), log: (s) => console.log(s) });
  writeCalibration(`${out}/profile.json`, cal);
  console.log(formatFits(cal.fits));
  console.log(`calibrate ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const { compare, formatCompare } = await load('hil/compare/compare.js');
const { parsePolicyList } = await load('hil/compare/policy-list.js');
const { writeTracePrefix } = await load('hil/validate/validate.js');
for (const cell of (process.env.CELLS ?? '8192:default:1:20%:quest').split(';')) {
  let trace, label, budget, pols;
  if (cell.startsWith('file:')) {
    const [, path, b, ...p] = cell.split(':');
    [budget, pols] = [b, p.join(':')];
    const name = path.replace(/^.*\//, '').replace(/\.kvt$/, '');
    trace = resolve(out, `t-${name}-${steps}.kvt`);
    if (!existsSync(trace)) writeTracePrefix(resolve(path), trace, steps);
    label = `${name}-${budget.replace('%', 'pct')}`;
  } else {
    if (model !== 'llama-3-8b') throw new Error(`diag-compare: generated cells are Llama-3-8B traces; with MODEL=${model} give file: cells`);
    const [prompt, preset, seed, b, ...p] = cell.split(':');
    [budget, pols] = [b, p.join(':')];
    trace = resolve(out, `t-${prompt}-${preset}-${seed}.kvt`);
    if (!existsSync(trace)) generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: Number(prompt), steps, seed: Number(seed), ...(preset !== 'default' ? { preset } : {}) });
    label = `${prompt}-${preset}-${seed}-${budget.replace('%', 'pct')}`;
  }
  try {
    const r = await compare({ trace, policies: parsePolicyList(pols.replaceAll('+', ',')), hbmBudget: budget, hardware: `${out}/profile.json`, model: model === 'llama-3-8b' ? undefined : model, groupSize: Number(process.env.GROUP_SIZE ?? 128), out: `${out}/c-${label}`, hil: { backend: process.env.BACKEND ?? 'cuda', seed: 1, nvmeDir: '/tmp' }, repeat: Number(process.env.REPEAT ?? 2), log: () => {} });
    console.log(`== ${label}`);
    console.log(formatCompare(r));
  } catch (e) {
    console.log(`== ${label} FAILED: ${e.message}`);
  }
  console.log(`elapsed ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
