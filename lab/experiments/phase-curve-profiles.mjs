// Offline (no GPU): a validate run's profiles with their FP16 attention curve moved by the difference
// between the mean around each calibration context and the time at the context itself, as timed on another
// lease of the same GPU (perf/device/chain-phase-curve.mjs output), written into a copy of the run directory
// so `kvtier hil validate-resim` prices the same hardware steps with the curve a phased calibration gives.
// Curve points at contexts the phase file does not have stay as they are.
//   node lab/experiments/phase-curve-profiles.mjs RUNDIR PHASES.jsonl OUTDIR
import fs from 'node:fs';
import { join } from 'node:path';

const [run, phasesFile, out] = process.argv.slice(2);
if (!run || !phasesFile || !out) throw new Error('usage: node lab/experiments/phase-curve-profiles.mjs RUNDIR PHASES.jsonl OUTDIR');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const deltas = new Map();
for (const line of fs.readFileSync(phasesFile, 'utf8').split('\n').filter(Boolean)) {
  const r = JSON.parse(line);
  deltas.set(r.model, new Map(r.points.map((p) => [p.tokens, p.mean_us - p.at_context_us])));
}
fs.cpSync(run, out, { recursive: true });
for (const f of fs.readdirSync(join(out, 'profiles')).filter((x) => x.endsWith('.json') && !x.endsWith('.fit.json'))) {
  const model = f.replace(/\.json$/, '');
  const d = deltas.get(model);
  if (!d) continue;
  const pf = join(out, 'profiles', f);
  const p = JSON.parse(fs.readFileSync(pf, 'utf8'));
  const moved = [];
  p.gpu.attention_curve = p.gpu.attention_curve.map((x) => {
    const k = d.get(x.tokens);
    if (k === undefined) return x;
    moved.push(`${x.tokens} ${k >= 0 ? '+' : ''}${k.toFixed(2)}`);
    return { tokens: x.tokens, us: Math.round(Math.max(0.01, x.us + k) * 100) / 100 };
  });
  fs.writeFileSync(pf, JSON.stringify(p, null, 2));
  console.log(`${pf}: ${moved.join(', ')} us`);
}
