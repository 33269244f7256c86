// DPNC's prefetch and run quality at several training-sample rates (policy option train_rate), one
// JSON line per (setting, rate) on stdout: the policy-speed bench trace (h100-pcie5, 20%), four
// generated traces (256 steps, seed 1) with default options and with hbm_age_steps=4 (dpnc-4tier,
// 20%), and three captured traces with hbm_age_steps=4. DIST: a compiled tree (`npx tsc -p
// tsconfig.json` makes ./dist); EXTRA (env, JSON): more dpnc options for every run.
//
//   for p in broad needle; do for ctx in 8192 32768; do
//     node bin/kvtier.js trace gen --out /tmp/dpnc-q/gen-$p-$((ctx/1024))k.kvt --preset $p --prompt-tokens $ctx --steps 256 --seed 1
//   done; done
//   node lab/data/dpnc-lazy-rows/quality.mjs $PWD/dist new 1,0.5,0.25,0.125 > OUT.jsonl
import * as path from 'node:path';
const [dist, label, rateArg] = process.argv.slice(2);
const { registerBuiltinPolicies } = await import(dist + '/policies/builtin.js');
const { simulate } = await import(dist + '/sim/run.js');
registerBuiltinPolicies();
const C = new URL('../../../traces/captured', import.meta.url).pathname, M = C + '/kvtier-brown-gpt.model.json';
const gen = ['broad-8k', 'needle-8k', 'broad-32k', 'needle-32k'].map((g) => `/tmp/dpnc-q/gen-${g}.kvt`);
const settings = [
  { trace: '/tmp/kvtier-bench-llama3-8b-32768-1000-topk.kvt', hardware: 'h100-pcie5', budget: '20%', opts: {} },
  ...gen.map((trace) => ({ trace, hardware: 'dpnc-4tier', budget: '20%', opts: {} })),
  ...gen.map((trace) => ({ trace, hardware: 'dpnc-4tier', budget: '20%', opts: { hbm_age_steps: 4 } })),
  ...['brown-long-8k', 'brown-multitopic-8k', 'brown-needle-8k-d30'].map((t) => ({ trace: `${C}/${t}.kvt`, model: M, hardware: 'dpnc-4tier', budget: '20%', opts: { hbm_age_steps: 4 } })),
];
for (const st of settings) for (const rate of rateArg.split(',').map(Number)) {
  const extra = JSON.parse(process.env.EXTRA ?? '{}'); const opts = rate === 1 ? { ...st.opts, ...extra } : { ...st.opts, ...extra, train_rate: rate };
  const c0 = process.cpuUsage();
  const r = simulate({ trace: st.trace, model: st.model, policy: 'dpnc', policy_options: opts, hardware: st.hardware, hbm_budget: st.budget, trace_steps: 0 });
  const c = process.cpuUsage(c0);
  const s = r.summary, p = s.policy_report;
  console.log(JSON.stringify({ label, trace: path.basename(st.trace), hardware: st.hardware, opts: st.opts, rate, cpu_s: (c.user + c.system) / 1e6,
    recall: s.attention_recall.mean, tbt_mean_ms: s.tbt_ms.mean, acc: p.predictor_accuracy, maj: p.predictor_majority_accuracy, predicted: p.predictor_predicted,
    prefetches: p.prefetches, prec: p.prefetch_precision, prefetch_recall: p.prefetch_recall, bytes: p.prefetch_bytes, wasted: p.prefetch_bytes_wasted,
    tree_in: p.prefetches_tree, tree_used: p.prefetch_used_tree, samples: p.training_samples, train_acc: p.training_accuracy, splits: p.tree_splits }));
}
