#!/usr/bin/env node
/**
 * How far a validate run's simulated steps move between calibrations of one model: the run's hardware steps
 * simulated again once per given profile (that model's profile replaced, `kvtier hil validate-resim`), then per
 * cell the spread of the simulated mean step ((max - min) / the measured mean) and each profile's error of the
 * mean. Profiles from perf/device/calibrate-repeat.mjs.
 *   node lab/experiments/calibration-spread.mjs RUNDIR MODEL PROFILE.json [PROFILE.json ...]
 * (from the repository root, after `npx tsc -p tsconfig.json`; each PROFILE.json beside its .fit.json)
 */
import { execFileSync } from 'node:child_process';
import { cpSync, copyFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [run, model, ...profiles] = process.argv.slice(2);
if (!run || !model || profiles.length < 2) throw new Error('usage: node lab/experiments/calibration-spread.mjs RUNDIR MODEL PROFILE.json PROFILE.json [...]');
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
const work = mkdtempSync(join(tmpdir(), 'kvtier-cal-spread-'));
const resims = profiles.map((p, k) => {
  const dir = join(work, `run-${k}`);
  cpSync(run, dir, { recursive: true });
  copyFileSync(p, join(dir, 'profiles', `${model}.json`));
  const fit = p.replace(/\.json$/, '.fit.json');
  if (existsSync(fit)) copyFileSync(fit, join(dir, 'profiles', `${model}.fit.json`));
  execFileSync(process.execPath, ['bin/kvtier.js', 'hil', 'validate-resim', dir, '--out', `${dir}-r`], { stdio: 'ignore' });
  return JSON.parse(readFileSync(join(`${dir}-r`, 'validate.json'), 'utf8'));
});
const base = JSON.parse(readFileSync(join(run, 'validate.json'), 'utf8'));
const skip = base.skip_steps;
const rows = [];
for (const c of base.cells) {
  if (c.status !== 'ok' || c.model !== model) continue;
  const hw = mean(c.hw_median_ms.slice(skip));
  const sims = resims.map((r) => mean(r.cells.find((x) => x.id === c.id).sim_ms.slice(skip)));
  rows.push({ id: c.id, pool: c.pool, spread: (Math.max(...sims) - Math.min(...sims)) / hw, errs: sims.map((s) => (s - hw) / hw) });
}
rows.sort((a, b) => b.spread - a.spread);
const pct = (x) => `${(100 * x).toFixed(2)}%`;
for (const r of rows) console.log(`${r.id.padEnd(66)} ${r.pool.padEnd(10)} spread ${pct(r.spread).padStart(8)}  mean error per profile ${r.errs.map(pct).join(' / ')}`);
for (const pool of ['moving', 'non-moving', 'storage']) {
  const s = rows.filter((r) => r.pool === pool).map((r) => r.spread).sort((a, b) => a - b);
  if (s.length) console.log(`${pool}: ${s.length} cells, spread median ${pct(s[s.length >> 1])}, max ${pct(s[s.length - 1])}`);
}
