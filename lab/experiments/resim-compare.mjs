#!/usr/bin/env node
// Offline: two validate-resim outputs of the same stored runs (before / after a simulator change),
// per run the per-policy median of the cells' median |error| and mean signed error of SmartKV's
// cells, and the pooled generated-trace moving-data median / p95 (summarizeCells).
//   npx tsc -p tsconfig.json
//   node lab/experiments/resim-compare.mjs BEFORE_PREFIX AFTER_PREFIX RUNNAME...   (dirs BEFORE_PREFIX-RUNNAME)
import * as fs from 'node:fs';
import { summarizeCells } from '../../dist/hil/validate/validate.js';
const [bp, ap, ...runs] = process.argv.slice(2);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN; };
const pct = (x) => (x * 100).toFixed(2);
for (const r of runs) {
  const B = JSON.parse(fs.readFileSync(`${bp}-${r}/validate.json`, 'utf8'));
  const A = JSON.parse(fs.readFileSync(`${ap}-${r}/validate.json`, 'utf8'));
  // the generated traces' cells only (the captured model's and storage cells apart)
  const gen = (v) => v.cells.filter((c) => c.trace_kind === 'generated');
  const sb = summarizeCells(gen(B), B.grid.skip_steps), sa = summarizeCells(gen(A), A.grid.skip_steps);
  const pool = (s) => { const p = s.pools.find((x) => x.name.startsWith('moving data (any')); return p ? `${pct(p.error.median)} / ${pct(p.error.p95)} (${p.passed} of ${p.cells} pass)` : 'none'; };
  console.log(`\n## ${r}\npooled generated moving: before ${pool(sb)}  after ${pool(sa)}`);
  const pols = [...new Set(B.cells.filter((c) => c.status === 'ok').map((c) => c.label))].sort();
  const changed = [];
  for (const p of pols) {
    const b = B.cells.filter((c) => c.status === 'ok' && c.label === p), a = A.cells.filter((c) => c.status === 'ok' && c.label === p);
    const mb = med(b.map((c) => c.error.median)), ma = med(a.map((c) => c.error.median));
    if (Math.abs(mb - ma) > 1e-4) changed.push(`${p} ${pct(mb)} -> ${pct(ma)}`);
  }
  console.log(`per-policy median |error| changed: ${changed.join('; ') || 'none'}`);
  for (const c of B.cells) {
    if (c.status !== 'ok' || !/smartkv|kivi|uniform-int8/.test(c.label)) continue;
    const a = A.cells.find((x) => x.id === c.id);
    const sgn = (x) => (x.sim_dist.mean / x.hw_dist.mean - 1) * 100;
    if (Math.abs(sgn(a) - sgn(c)) < 0.05 && Math.abs(a.error.median - c.error.median) < 5e-4) continue;
    console.log(`  ${c.id.slice(5)}: mean ${sgn(c).toFixed(1)} -> ${sgn(a).toFixed(1)}%, median ${pct(c.error.median)} -> ${pct(a.error.median)}, p95 ${pct(c.error.p95)} -> ${pct(a.error.p95)}`);
  }
}
