// Tables of a grid.mjs output: per rate, the worst difference from rate 1 of the same (trace,
// budget) cell and how many cells stay within the tolerance; with `cells`, run recall, prefetch
// recall / precision and page-ins of every cell at the rates given.
//
//   node lab/data/dpnc-train-rate/table.mjs RESULTS.jsonl [cells RATES]
import fs from 'node:fs';

const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const key = (r) => `${r.trace} ${r.budget}`;
const base = new Map(rows.filter((r) => r.rate === 1).map((r) => [key(r), r]));
const rates = [...new Set(rows.map((r) => r.rate))].sort((a, b) => b - a);
const f = (x, d = 4) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(d));
// the tolerance: run recall 0.005, prefetch recall 0.02, precision 0.05 (both runs >= 50 page-ins), TBT p50 1%
const within = (r, b) => {
  const both = r.prefetches >= 50 && b.prefetches >= 50;
  return Math.abs(r.recall - b.recall) <= 0.005 && Math.abs(r.prefetch_recall - b.prefetch_recall) <= 0.02 && (!both || Math.abs(r.prefetch_precision - b.prefetch_precision) <= 0.05) && Math.abs(r.tbt_p50_ms / b.tbt_p50_ms - 1) <= 0.01;
};
console.log('| rate | cells within tolerance | worst \\|Δ run recall\\| | mean Δ run recall | worst \\|Δ prefetch recall\\| | worst \\|Δ precision\\| (cells with ≥ 50 page-ins in both) | worst \\|TBT p50 change\\| | page-ins | tree page-ins (used) | MB paged in / wasted | tree "needed" answers (right) | predictor accuracy − majority (mean) | samples learned | CPU s |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const rate of rates) {
  let dr = 0, sr = 0, dp = 0, dq = 0, dqN = 0, dt = 0, ok = 0, n = 0, pre = 0, tree = 0, treeUsed = 0, said = 0, right = 0, bytes = 0, wasted = 0, acc = 0, samples = 0, cpu = 0;
  for (const r of rows.filter((x) => x.rate === rate)) {
    const b = base.get(key(r));
    if (!b) continue;
    n++;
    dr = Math.max(dr, Math.abs(r.recall - b.recall));
    sr += r.recall - b.recall;
    dp = Math.max(dp, Math.abs(r.prefetch_recall - b.prefetch_recall));
    if (r.prefetches >= 50 && b.prefetches >= 50) {
      dqN++;
      dq = Math.max(dq, Math.abs(r.prefetch_precision - b.prefetch_precision));
    }
    dt = Math.max(dt, Math.abs(r.tbt_p50_ms / b.tbt_p50_ms - 1));
    if (within(r, b)) ok++;
    pre += r.prefetches;
    tree += r.prefetches_tree;
    treeUsed += r.prefetch_used_tree;
    said += r.predictor_predicted;
    right += r.predictor_true_positives;
    bytes += r.prefetch_bytes;
    wasted += r.prefetch_bytes_wasted;
    acc += r.predictor_accuracy - r.predictor_majority_accuracy;
    samples += r.training_samples;
    cpu += r.cpu_s;
  }
  console.log(`| ${rate} | ${ok}/${n} | ${f(dr)} | ${f(sr / n, 4)} | ${f(dp)} | ${dqN ? f(dq) : '–'} (${dqN}) | ${(100 * dt).toFixed(1)}% | ${pre} | ${tree} (${treeUsed}) | ${(bytes / 1e6).toFixed(0)} / ${(wasted / 1e6).toFixed(0)} | ${said} (${right}) | ${f(acc / n)} | ${samples} | ${cpu.toFixed(1)} |`);
}
if (process.argv[3] === 'cells') {
  const show = (process.argv[4] ?? '1,0.1').split(',').map(Number);
  console.log(`\n| trace | budget | ${show.map((r) => `rate ${r}: run recall / prefetch recall / precision / page-ins`).join(' | ')} |`);
  console.log(`|---|---|${show.map(() => '---').join('|')}|`);
  for (const b of base.values()) {
    const cells = show.map((rate) => {
      const r = rows.find((x) => x.rate === rate && key(x) === key(b));
      return r ? `${f(r.recall)} / ${f(r.prefetch_recall)} / ${f(r.prefetch_precision, 3)} / ${r.prefetches}${rate !== 1 && !within(r, b) ? ' **out**' : ''}` : '';
    });
    console.log(`| ${b.trace} | ${b.budget} | ${cells.join(' | ')} |`);
  }
}
