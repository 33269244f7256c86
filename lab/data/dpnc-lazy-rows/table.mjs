// The quality table of docs/seed-dpnc.md from this folder's JSON lines (quality.mjs's output):
// per setting, the code before the lazy rows at rate 1, this code at rate 1, at rate 1 with seed 2
// (the spread of an equally good run), and at the lower rates.
//
//   node lab/data/dpnc-lazy-rows/table.mjs
import * as fs from 'node:fs';
const read = (f) => fs.readFileSync(new URL(f, import.meta.url), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const rows = [
  ...read('quality-4455625-rate-1.jsonl').map((r) => ({ ...r, variant: '4455625, 1' })),
  ...read('quality-rates.jsonl').map((r) => ({ ...r, variant: String(r.rate) })),
  ...read('quality-rate-1-seed-2.jsonl').map((r) => ({ ...r, variant: '1, seed 2' })),
];
const order = ['4455625, 1', '1', '1, seed 2', '0.5', '0.25', '0.125'];
const name = (r) => `${r.trace.replace('.kvt', '').replace('kvtier-bench-llama3-8b-32768-1000-topk', 'bench trace (h100-pcie5)')}${r.opts.hbm_age_steps ? ', hbm_age_steps=4' : ''}`;
const f = (x, d) => (x === null || x === undefined ? '–' : x.toFixed(d));
console.log('| setting (20%) | rate | run recall | mean TBT ms | predictor accuracy / majority | "needed" answers | page-ins (tree: used) | precision | prefetch recall | MB wasted | samples learned |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
const settings = [...new Set(rows.map(name))];
for (const s of settings) {
  for (const v of order) {
    const r = rows.find((x) => name(x) === s && x.variant === v);
    if (!r) continue;
    console.log(`| ${s} | ${v} | ${f(r.recall, 4)} | ${f(r.tbt_mean_ms, 3)} | ${f(r.acc, 4)} / ${f(r.maj, 4)} | ${r.predicted} | ${r.prefetches} (${r.tree_in}: ${r.tree_used}) | ${f(r.prec, 3)} | ${f(r.prefetch_recall, 4)} | ${(r.wasted / 1e6).toFixed(1)} | ${r.samples} |`);
  }
}
