// On the GPU machine (plain node, compiled JS): one calibration, then hil compare of chosen policies on
// chosen generated traces and budgets, to look at where the simulator's per-step model departs from the
// hardware. Per-step CSVs and compare.json of every cell land under OUTDIR.
//   node perf/device/diag-compare.mjs DIST OUTDIR
// CELLS="prompt:preset:seed:budget:policies;..." (policies joined by +), REPEAT=n, STEPS=n, QUICK=1,
// PROFILE=path (a calibrated profile to use instead of calibrating)
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
const { generateTrace } = await load('traces/generator.js');
const { calibrate, writeCalibration, formatFits } = await load('hil/calibrate/calibrate.js');
if (process.env.PROFILE) {
  // a calibrated profile given (e.g. one a validation grid calibrated at held-out points): no calibration here
  copyFileSync(resolve(process.env.PROFILE), `${out}/profile.json`);
  console.log(`profile ${process.env.PROFILE}`);
} else {
  const cal = await calibrate({ backend: 'cuda', base: 'h100-pcie5', model: 'llama-3-8b', fileDir: '/tmp', quick: process.env.QUICK === '1', log: (s) => console.log(s) });
  writeCalibration(`${out}/profile.json`, cal);
  console.log(formatFits(cal.fits));
  console.log(`calibrate ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const { compare, formatCompare } = await load('hil/compare/compare.js');
const { parsePolicyList } = await load('hil/compare/policy-list.js');
for (const cell of (process.env.CELLS ?? '8192:default:1:20%:quest').split(';')) {
  const [prompt, preset, seed, budget, pols] = cell.split(':');
  const trace = resolve(out, `t-${prompt}-${preset}-${seed}.kvt`);
  if (!existsSync(trace)) generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: Number(prompt), steps, seed: Number(seed), ...(preset !== 'default' ? { preset } : {}) });
  const label = `${prompt}-${preset}-${seed}-${budget.replace('%', 'pct')}`;
  try {
    const r = await compare({ trace, policies: parsePolicyList(pols.replaceAll('+', ',')), hbmBudget: budget, hardware: `${out}/profile.json`, out: `${out}/c-${label}`, hil: { backend: 'cuda', seed: 1, nvmeDir: '/tmp' }, repeat: Number(process.env.REPEAT ?? 2), log: () => {} });
    console.log(`== ${label}`);
    console.log(formatCompare(r));
  } catch (e) {
    console.log(`== ${label} FAILED: ${e.message}`);
  }
  console.log(`elapsed ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
