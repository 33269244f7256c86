// The SmartKV cells of a validate run: for each step with at least 50 conversion kernels in the simulated
// plan (the re-bucketing step), the kernels and spans, the hardware's and the simulator's extra time on that
// step over their median step (steps after the first), per kernel, and the profile's issue_convert_us.
//   node lab/data/hil/diag-2026-11-28h/smartkv-rebucket.mjs RUN TRACES_DIR      (after npm run build)
// TRACES_DIR: the traces/ that `kvtier hil validate-resim RUN --out X --as-calibrated` writes into X.
import { simulate } from '../../../../dist/sim/run.js';
import fs from 'node:fs';
import { join } from 'node:path';

const [run, tracesDir] = process.argv.slice(2);
if (!run || !tracesDir) throw new Error('usage: node smartkv-rebucket.mjs RUN TRACES_DIR');
const v = JSON.parse(fs.readFileSync(join(run, 'validate.json'), 'utf8'));
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const c of v.cells) {
  if (c.policy !== 'smartkv' || c.status !== 'ok') continue;
  const cell = JSON.parse(fs.readFileSync(join(run, 'cells', c.id + '.json'), 'utf8'));
  const trace = join(tracesDir, c.trace + '.kvt');
  if (!fs.existsSync(trace)) continue;
  const captured = c.model.includes('/');
  const prof = join(run, 'profiles', (captured ? 'kvtier-brown-gpt' : c.model) + '.json');
  const p = JSON.parse(fs.readFileSync(prof, 'utf8'));
  const r = simulate({ trace, policy: 'smartkv', hardware: prof, hbm_budget: c.budget, group_size: 128, ...(captured ? {} : { model: c.model }), trace_steps: 16 });
  const hw = cell.hw_median_ms;
  const sim = cell.sim_ms;
  for (let s = 1; s < hw.length; s++) {
    let kernels = 0;
    let spans = 0;
    for (const x of r.spans) {
      if (x.args?.step !== s || x.cat !== 'quantize') continue;
      kernels += x.args.kernels ?? 0;
      spans++;
    }
    if (kernels < 50) continue;
    const hwx = hw[s] - med(hw.slice(1));
    const simx = sim[s] - med(sim.slice(1));
    console.log(JSON.stringify({ run: run.split('/').pop(), id: c.id, step: s, kernels, spans, hw_extra: +hwx.toFixed(2), sim_extra: +simx.toFixed(2), hw_us_per_kernel: +((hwx * 1000) / kernels).toFixed(2), sim_us_per_kernel: +((simx * 1000) / kernels).toFixed(2), issue_convert_us: p.gpu.issue_convert_us }));
  }
}
