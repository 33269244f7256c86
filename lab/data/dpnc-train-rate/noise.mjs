// rate 1 at another seed against rate 1 (same options otherwise): the spread of an equally good run.
//   node lab/data/dpnc-train-rate/noise.mjs RESULTS.jsonl OTHER-SEED.jsonl
import fs from 'node:fs';
const a = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.rate === 1);
const b = fs.readFileSync(process.argv[3], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const key = (r) => `${r.trace} ${r.budget}`;
const base = new Map(a.map((r) => [key(r), r]));
let dr = 0, dp = 0, dq = 0, dt = 0, ok = 0, n = 0, sr = 0;
for (const r of b) { const x = base.get(key(r)); if (!x) continue; n++;
  const a1 = Math.abs(r.recall - x.recall), a2 = Math.abs(r.prefetch_recall - x.prefetch_recall), a3 = r.prefetches >= 50 && x.prefetches >= 50 ? Math.abs(r.prefetch_precision - x.prefetch_precision) : 0, a4 = Math.abs(r.tbt_p50_ms / x.tbt_p50_ms - 1);
  dr = Math.max(dr, a1); dp = Math.max(dp, a2); dq = Math.max(dq, a3); dt = Math.max(dt, a4); sr += r.recall - x.recall;
  if (a1 <= 0.005 && a2 <= 0.02 && a3 <= 0.05 && a4 <= 0.01) ok++; }
console.log(`| rate 1, seed 2 vs seed 1 | ${n} | ${dr.toFixed(4)} | ${dp.toFixed(4)} | ${dq.toFixed(4)} | ${(100 * dt).toFixed(2)}% | ${ok}/${n} | mean Δ run recall ${(sr / n).toFixed(4)} |`);
