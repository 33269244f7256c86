import type { Command } from 'commander';
import { checkOutDir } from '../../sim/output-dir.js';
import { writeRunDir } from '../../sim/run-dir.js';
import { simulateRegistered, type RunConfig } from '../../sim/simulate-core.js';
import { policyModuleOf } from '../policy-catalog.js';
import { collectPair, intFlag } from '../parse-pairs.js';
import { progressBar } from '../progress.js';

/** The flags `kvtier run` and `kvtier hil run` share, so the two take the same arguments. */
export function withRunFlags(cmd: Command): Command {
  return cmd
    .requiredOption('--trace <file>', 'attention trace (.kvt)')
    .requiredOption('--policy <name>', 'policy (see "kvtier policies")')
    .option('--model <name>', "model preset (default: the trace's model)")
    .option('--hardware <name|file>', 'hardware preset or profile JSON', 'h100-pcie5')
    .option('--hbm-budget <x>', 'KV budget in HBM: a share of the full KV (20%, 0.2) or a size (4GiB)', '20%')
    .option('--opt <key=value>', 'policy option (repeatable)', collectPair, {})
    .option('--group-size <n>', 'quantization group size', intFlag('--group-size', 1), 128)
    .option('--trace-steps <n>', 'decode steps recorded in trace.json', intFlag('--trace-steps'), 32)
    .option('--copy-mode <mode>', 'PCIe copies: per-run (one per contiguous run of blocks, as measured) or gather (one per batch, a what-if)', 'per-run')
    .requiredOption('--out <dir>', 'run directory to write')
    .option('--force', 'replace an existing run directory');
}

export function runConfigFromFlags(o: Record<string, any>): RunConfig {
  return {
    trace: o.trace,
    policy: o.policy,
    policy_options: o.opt,
    model: o.model,
    hardware: o.hardware,
    hbm_budget: o.hbmBudget,
    group_size: o.groupSize,
    trace_steps: o.traceSteps,
    copy_mode: o.copyMode,
  };
}

/**
 * Registers the policy `name` for a run: only its own module where the policy catalog names it
 * (policies/catalog.json, while its digest holds), else every built-in policy (an unknown name then
 * fails in the run naming the valid ones).
 */
export async function registerPolicyFor(name: string): Promise<void> {
  const { findPolicy, registerPolicy } = await import('../../policies/registry.js');
  if (findPolicy(name)) return;
  const base = policyModuleOf(name);
  if (base) {
    const m = (await import(`../../policies/${base}.js`)) as Record<string, unknown>;
    const def = Object.values(m).find((v) => (v as { name?: unknown; create?: unknown })?.name === name && typeof (v as { create?: unknown }).create === 'function');
    if (def) {
      registerPolicy(def as Parameters<typeof registerPolicy>[0]);
      return;
    }
  }
  const { registerBuiltinPolicies } = await import('../../policies/builtin.js');
  registerBuiltinPolicies();
}

export function registerRun(program: Command): void {
  withRunFlags(program.command('run').description('replay an attention trace against a policy on simulated tiered memory')).action(async (o) => {
    const t0 = performance.now();
    checkOutDir(o.out, Boolean(o.force), [o.trace]);
    await registerPolicyFor(o.policy);
    const bar = progressBar({ label: 'replay' });
    let r;
    try {
      r = simulateRegistered(runConfigFromFlags(o), { onProgress: bar.active ? bar.callback : undefined });
    } finally {
      bar.stop();
    }
    writeRunDir(o.out, r, Boolean(o.force));
    const s = r.summary;
    const refused = Object.entries(s.refused_actions);
    console.log(
      `${s.policy} on ${s.hardware}, ${s.model}, budget ${(s.hbm_budget_fraction * 100).toFixed(1)}% of KV: ` +
        `TBT p50 ${s.tbt_ms.p50.toFixed(3)} ms, p99 ${s.tbt_ms.p99.toFixed(3)} ms, ${s.tokens_per_s.toFixed(1)} tok/s, ` +
        `stall ${s.stall_ms.toFixed(2)} ms, masking ${(s.masking_efficiency * 100).toFixed(1)}%, recall ${s.attention_recall.mean.toFixed(4)} (min ${s.attention_recall.min.toFixed(4)})`,
    );
    if (refused.length) {
      console.log(`refused actions: ${refused.map(([k, v]) => `${k} ${v}`).join(', ')}`);
      for (const [k, v] of Object.entries(r.refusalExamples)) console.log(`  first ${k}: ${v}`);
    }
    console.log(`wrote ${o.out} (${((performance.now() - t0) / 1000).toFixed(2)} s)`);
  });
}
