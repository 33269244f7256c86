// Offline (no GPU): is a calibration's reading of the host's issue costs noisier than the hardware the cells
// ran on? A copy of RUNDIR whose profiles take, for each gpu.issue_*_us field, the median of the same model's
// profiles in the OTHER run directories (leave-one-out: RUNDIR's own value is not among them); the copy is then
// re-simulated against the stored hardware steps (`kvtier hil validate-resim`) and pooled as pools.mjs pools.
// A diagnostic: the other leases' medians are not a calibration of this one.
//   node lab/validate/tools/issue-median.mjs RUNDIR OUTDIR OTHER...   (after npm run build)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { join } from 'node:path';

const [run, out, ...others] = process.argv.slice(2);
if (!run || !out || others.length === 0) throw new Error('usage: node lab/validate/tools/issue-median.mjs RUNDIR OUTDIR OTHER...');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const FIELDS = ['issue_copy_us', 'issue_record_us', 'issue_kernel_us', 'issue_convert_us', 'issue_attention_us'];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const copy = `${out}-in`;
fs.cpSync(run, copy, { recursive: true });
for (const f of fs.readdirSync(join(copy, 'profiles'))) {
  if (!f.endsWith('.json') || f.endsWith('.fit.json')) continue;
  const p = JSON.parse(fs.readFileSync(join(copy, 'profiles', f), 'utf8'));
  const theirs = others.map((o) => join(o, 'profiles', f)).filter((x) => fs.existsSync(x)).map((x) => JSON.parse(fs.readFileSync(x, 'utf8')));
  const changed = [];
  for (const k of FIELDS) {
    const vals = theirs.map((t) => t.gpu?.[k]).filter((x) => typeof x === 'number');
    if (p.gpu[k] === undefined || vals.length === 0) continue;
    const m = Math.round(median(vals) * 100) / 100;
    changed.push(`${k} ${p.gpu[k]} -> ${m} (${vals.length} others)`);
    p.gpu[k] = m;
  }
  fs.writeFileSync(join(copy, 'profiles', f), JSON.stringify(p, null, 1));
  console.log(`${f}: ${changed.join('; ') || 'unchanged'}`);
}
execFileSync('node', ['bin/kvtier.js', 'hil', 'validate-resim', copy, '--out', out, '--force'], { stdio: 'ignore' });
process.stdout.write(execFileSync('node', ['lab/validate/tools/pools.mjs', out]).toString().split('\n').slice(0, 8).join('\n') + '\n');
fs.rmSync(copy, { recursive: true });
