// Offline (no GPU): a validate run's profiles with each phased FP16 attention-curve point put back to the
// time at the context itself (the PROFILE.fit.json measurements keep it as us_at_context), written into a
// copy of the run directory, so `kvtier hil validate-resim` prices the same hardware steps with the curve a
// calibration without phases would have written.
//   node lab/experiments/at-context-profiles.mjs RUNDIR OUTDIR
import fs from 'node:fs';
import { join } from 'node:path';

const [run, out] = process.argv.slice(2);
if (!run || !out) throw new Error('usage: node lab/experiments/at-context-profiles.mjs RUNDIR OUTDIR');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
fs.cpSync(run, out, { recursive: true });
for (const f of fs.readdirSync(join(out, 'profiles')).filter((x) => x.endsWith('.fit.json'))) {
  const situ = JSON.parse(fs.readFileSync(join(out, 'profiles', f), 'utf8')).measurements?.attention_in_situ ?? [];
  const shift = new Map(situ.filter((x) => x.us_at_context !== undefined).map((x) => [x.tokens, x.us_at_context - x.us]));
  if (!shift.size) continue;
  const pf = join(out, 'profiles', f.replace(/\.fit\.json$/, '.json'));
  const p = JSON.parse(fs.readFileSync(pf, 'utf8'));
  p.gpu.attention_curve = p.gpu.attention_curve.map((x) => (shift.has(x.tokens) ? { tokens: x.tokens, us: Math.round(Math.max(0.01, x.us + shift.get(x.tokens)) * 100) / 100 } : x));
  fs.writeFileSync(pf, JSON.stringify(p, null, 2));
  console.log(`${pf}: ${[...shift].map(([t, d]) => `${t} ${d >= 0 ? '+' : ''}${d.toFixed(2)}`).join(', ')} us`);
}
