// On the GPU machine (plain node, compiled JS): hil calibrate, then the six-policy hil compare on a
// generated Llama-3-8B trace (8192-token prompt, 64 steps, seed 1: the trace of lab/notes/HIL-NOTES.md).
//   node perf/device/compare.mjs DIST OUTDIR      POLICIES=a,b,... narrows the compare; REPEAT=n HIL runs per policy
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outArg] = process.argv.slice(2);
if (!dist || !outArg) throw new Error('usage: node perf/device/compare.mjs DIST OUTDIR');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const out = resolve(outArg);
mkdirSync(out, { recursive: true });
const t0 = performance.now();
const trace = resolve(out, 'llama8b-8k-64.kvt');
if (!existsSync(trace)) {
  const { generateTrace } = await load('traces/generator.js');
  generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: 8192, steps: 64, seed: 1 });
}
const { calibrate, writeCalibration, formatFits } = await load('hil/calibrate/calibrate.js');
const cal = await calibrate({ backend: 'cuda', base: 'h100-pcie5', model: 'llama-3-8b', fileDir: '/tmp', log: (s) => console.log(s) });
writeCalibration(`${out}/profile.json`, cal);
console.log(formatFits(cal.fits));
console.log(`calibrate ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const { compare, formatCompare } = await load('hil/compare/compare.js');
const { parsePolicyList } = await load('hil/compare/policy-list.js');
const policies = process.env.POLICIES ?? 'full,h2o,streaming-llm,lru-offload,lru-offload:prefetch=false,lru-offload:offload_tier=nvme';
const r = await compare({ trace, policies: parsePolicyList(policies), hbmBudget: '20%', hardware: `${out}/profile.json`, out: `${out}/compare`, hil: { backend: 'cuda', seed: 1, nvmeDir: '/tmp' }, repeat: Number(process.env.REPEAT ?? 1), log: (s) => console.log(s) });
console.log(formatCompare(r));
console.log(`total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
