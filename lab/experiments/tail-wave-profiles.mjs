// Offline (no GPU): a validate run's profiles with the attention kernel's tail wave priced apart
// (sim/attention-waves.ts), fitted from the run's own calibration (the FP16 chains timed around each
// curve point, `attention_in_situ` in profiles/MODEL.fit.json) as `hil calibrate` fits it
// (hil/calibrate/fit-tail-wave.ts), written into a copy of the run directory so that `kvtier hil
// validate-resim` prices the same hardware steps with it. Calibrations made before the dispatch's
// plans were recorded do not give the split rule: it is given here, per model, as the dispatch
// (hil/native/common/attention-plan.h) plans the FP16 tensor-core kernel on a 132-SM H100 / H200 at
// two resident blocks per SM: slots 264, a block per KV head and split, 4 warps per KV head.
//   node lab/experiments/tail-wave-profiles.mjs RUNDIR OUTDIR [--slots 264] [--models llama-2-7b,llama-3-8b] [--kernels fp16,int8,...]
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(`--${k}`) ? args[args.indexOf(`--${k}`) + 1] : d);
const [run, out] = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
if (!run || !out) throw new Error('usage: node lab/experiments/tail-wave-profiles.mjs RUNDIR OUTDIR [--slots 264] [--models a,b] [--kernels fp16,int8,...]');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const dist = resolve(new URL('../../dist', import.meta.url).pathname);
const { fitTailWave, withoutTailWave } = await import(pathToFileURL(join(dist, 'hil/calibrate/fit-tail-wave.js')).href);
const { loadModel } = await import(pathToFileURL(join(dist, 'sim/models/load-model.js')).href);
const slots = Number(opt('slots', '264'));
// the kernels whose dispatch follows the FP16 kernel's rule at these shapes: the per-block table kernel
// (v3: two resident blocks a SM, a block per KV head and split, as the host build's attentionPlan gives
// for Llama-2-7B and Llama-3-8B on 132 SMs), not the INT4 tensor-core kernel (four resident blocks)
const FOLLOWING = opt('kernels', 'fp16,int8,int2,mixed,mixed_sparse,mixed_interleaved,mixed_kinds').split(',');
const models = opt('models', 'llama-2-7b,llama-3-8b').split(',');
fs.cpSync(run, out, { recursive: true });
for (const model of models) {
  const pf = join(out, 'profiles', `${model}.json`);
  const ff = join(out, 'profiles', `${model}.fit.json`);
  if (!fs.existsSync(pf) || !fs.existsSync(ff)) continue;
  const m = loadModel(model);
  const rule = { slots, blocks_per_split: m.kv_heads, warps_per_head: 4, chunk_tokens: 16 };
  const chains = JSON.parse(fs.readFileSync(ff, 'utf8')).measurements.attention_in_situ;
  const fit = fitTailWave(chains, rule, 16);
  const l = fit.us_per_chunk === undefined ? undefined : Math.round(fit.us_per_chunk * 1000) / 1000;
  if (!(l > 0)) {
    console.log(`${model}: no tail wave priced (${fit.us_per_chunk === undefined ? 'no context differs in its tail' : `fitted ${fit.us_per_chunk.toFixed(3)} us per chunk`})`);
    continue;
  }
  const waves = { ...rule, us_per_chunk: l, kernels: FOLLOWING };
  const less = new Map(withoutTailWave(chains, waves, 16).map((c, i) => [c.tokens, chains[i].chain_us_per_layer - c.chain_us_per_layer]));
  const p = JSON.parse(fs.readFileSync(pf, 'utf8'));
  const moved = [];
  p.gpu.attention_curve = p.gpu.attention_curve.map((x) => {
    const d = less.get(x.tokens) ?? 0;
    if (d !== 0) moved.push(`${x.tokens} -${d.toFixed(2)}`);
    return d === 0 ? x : { tokens: x.tokens, us: Math.round(Math.max(0.01, x.us - d) * 100) / 100 };
  });
  p.gpu.attention_waves = waves;
  p.sources['gpu.attention_waves'] = `offline (lab/experiments/tail-wave-profiles.mjs): rule given (${slots} slots, ${m.kv_heads} blocks per split, 4 warps per KV head; kernels ${FOLLOWING.join(', ')}), us_per_chunk fitted over ${fit.contexts} contexts of ${fit.points} points of this run's calibration: rms ${fit.rms_without_us.toFixed(2)} -> ${fit.rms_with_us.toFixed(2)} us (max ${fit.max_with_us.toFixed(2)})`;
  fs.writeFileSync(pf, JSON.stringify(p, null, 2));
  console.log(`${model}: ${l} us per chunk, rms ${fit.rms_without_us.toFixed(2)} -> ${fit.rms_with_us.toFixed(2)} us (max ${fit.max_with_us.toFixed(2)}) over ${fit.contexts} contexts; curve ${moved.join(', ')} us`);
}
