// Digests (summary and per-step table) of 50 DPNC runs at train_rate 1 on dpnc-4tier: two generated
// traces (quality.mjs makes them), two captured ones and a bundled one, five option sets, 10% and 40%.
// Run with two compiled trees and compare the lines: exact-4455625.txt and exact.txt are equal.
//
//   node lab/data/dpnc-lazy-rows/exact.mjs $PWD/dist > OUT.txt
import { createHash } from 'node:crypto';
const dist = process.argv[2];
const { registerBuiltinPolicies } = await import(dist + '/policies/builtin.js');
const { simulate } = await import(dist + '/sim/run.js');
registerBuiltinPolicies();
const T = new URL('../../../traces', import.meta.url).pathname;
const C = T + '/captured', M = C + '/kvtier-brown-gpt.model.json';
const traces = [['/tmp/dpnc-q/gen-broad-8k.kvt'], ['/tmp/dpnc-q/gen-needle-8k.kvt'], [C + '/brown-long-8k.kvt', M], [C + '/brown-multitopic-8k.kvt', M], [T + '/bundled/llama-3-8b-2k-default.kvt']];
const optsList = [{}, { train_on: 'offloaded', hbm_age_steps: 4 }, { importance_trigger: true, explore: 2 }, { dram_factor: 0.5, cxl_factor: 1, demote_max: 10, age_steps: 2, hbm_age_steps: 3, recent_steps: 20, explore: 2 }, { use_factor: 0.5, hbm_age_steps: 2, tree_grace: 20, tree_tau: 0.2 }];
const out = [];
for (const [trace, model] of traces) for (const opts of optsList) for (const budget of ['10%', '40%']) {
  const r = simulate({ trace, model, policy: 'dpnc', policy_options: opts, hardware: 'dpnc-4tier', hbm_budget: budget, trace_steps: 0 });
  out.push(createHash('sha256').update(JSON.stringify(r.summary)).update(JSON.stringify(r.steps)).digest('hex').slice(0, 12));
}
console.log(out.join(' '));
