/**
 * `kvtier sweep --dry-run`: checks every configuration of a sweep file before anything runs —
 * policy names and options, budgets, hardware, models, traces (each trace's header is read, each
 * generated trace's settings resolved) and what only a combination decides (the model's layers
 * against the trace's, the budget against the HBM left after the weights the policy keeps there, as
 * a run counts them: sim/run-policy.ts creates the policy, sim/weight-streaming.ts sizes its weights).
 * Each error names the sweep-file field and the valid choices.
 */
import { existsSync, openSync, readSync, closeSync } from 'node:fs';
import { registerBuiltinPolicies } from '../policies/builtin.js';
import { getPolicy, resolveOptions } from '../policies/registry.js';
import { generatedHeader } from '../traces/generator.js';
import { blocksFor, type TraceHeader } from '../traces/format.js';
import { readTraceHeader } from '../traces/trace-reader.js';
import { resolveRequestsArg } from '../traces/requests/bundled-traces.js';
import { detectRequestFormat } from '../traces/requests/read-request-trace.js';
import { parseBudget } from '../sim/budget.js';
import { GiB, type HardwareProfile } from '../sim/hardware/profile.js';
import { loadHardware } from '../sim/hardware/load-profile.js';
import { loadModel } from '../sim/models/load-model.js';
import { kvBytes, type ModelSpec } from '../sim/models/model.js';
import { createRunPolicy } from '../sim/run-policy.js';
import { describeHbmWeights, hbmWeightBytes, hostWeightBytes } from '../sim/weight-streaming.js';
import { getCachePolicy } from '../serving/cache-policy-registry.js';
import { resolveServingTiers } from '../serving/serving-tiers.js';
import { expandServeSweep, type ServeSweepSpec } from './serve-sweep-spec.js';
import { expandSweep, type PolicyEntry, type SweepSpec } from './sweep-spec.js';

export interface SweepCheck {
  /** configurations in the sweep (before sharding) */
  count: number;
  errors: string[];
}

/** Load each distinct value once; an error is reported once, under the first field that names it. */
function loader<T>(errors: string[], file: string) {
  const seen = new Map<string, T | null>();
  return (field: string, key: string, load: () => T): T | null => {
    if (!seen.has(key)) {
      try {
        seen.set(key, load());
      } catch (e) {
        seen.set(key, null);
        errors.push(`${file}: ${field}: ${(e as Error).message}`);
      }
    }
    return seen.get(key)!;
  };
}

/** Errors only a combination decides, grouped: one line per message with the first configuration and how many more. */
function comboErrors(errors: string[], file: string) {
  const byMsg = new Map<string, { first: string; more: number }>();
  return {
    add(id: string, msg: string) {
      const e = byMsg.get(msg);
      if (e) e.more++;
      else byMsg.set(msg, { first: id, more: 0 });
    },
    flush() {
      for (const [msg, e] of byMsg) errors.push(`${file}: configuration ${e.first}${e.more ? ` (and ${e.more} more)` : ''}: ${msg}`);
    },
  };
}

export function checkSweep(spec: SweepSpec, file: string): SweepCheck {
  registerBuiltinPolicies();
  const errors: string[] = [];
  const headers = loader<TraceHeader>(errors, file);
  const hardware = loader<HardwareProfile>(errors, file);
  const models = loader<ModelSpec>(errors, file);
  const policies = loader<true>(errors, file);
  const combos = comboErrors(errors, file);
  const configs = expandSweep(spec);
  for (const c of configs) {
    const ti = spec.traces.findIndex((t) => t.path === c.trace.path && t.generate === c.trace.generate);
    const header = c.trace.generate
      ? headers(`traces[${ti}].generate`, `gen:${ti}:${c.seed}`, () => generatedHeader({ ...c.trace.generate, seed: c.seed } as never))
      : headers(`traces[${ti}]`, `path:${c.trace.path}`, () => readTraceHeader(c.trace.path!));
    const hw = hardware(`hardware[${spec.hardware.indexOf(c.hardware)}]`, c.hardware, () => loadHardware(c.hardware));
    const pi = spec.policies.indexOf(c.policy);
    const policyOk = policies(`policies[${pi}]`, String(pi), () => {
      resolveOptions(getPolicy(c.policy.name), c.policy.options ?? {});
      return true;
    });
    if (!header || !hw || !policyOk) continue;
    const modelName = c.model ?? header.model;
    const where = c.model === null ? `the model "${modelName}" of traces[${ti}]` : c.trace.model !== undefined ? `traces[${ti}].model` : `models[${spec.models.indexOf(c.model)}]`;
    const model = models(where, modelName, () => loadModel(modelName));
    if (!model) continue;
    try {
      checkBudget(c.policy, c.budget, header, model, hw);
    } catch (e) {
      combos.add(c.id, (e as Error).message);
    }
  }
  combos.flush();
  return { count: configs.length, errors };
}

/**
 * The checks simulate() makes before it replays: layers, budget parse, fit in HBM after the weights the
 * policy keeps there (all of them, or its resident layers and streaming slots), the streamed weights
 * in their host tier, one block per layer.
 */
function checkBudget(p: PolicyEntry, budget: string | number, header: TraceHeader, model: ModelSpec, hw: HardwareProfile): void {
  if (model.layers !== header.layers) throw new Error(`the trace has ${header.layers} layers but model ${model.name} has ${model.layers}; pick a model with models: [...]`);
  const maxBlocks = blocksFor(header.prompt_tokens + header.steps, header.block_size);
  const blockBytes = kvBytes(model, header.block_size, 16, 128);
  const fullKvBytes = model.layers * maxBlocks * blockBytes;
  const full = getPolicy(p.name).full === true;
  const budgetBytes = full ? fullKvBytes : parseBudget(budget, fullKvBytes);
  const budgetBlocks = Math.floor(budgetBytes / (model.layers * blockBytes));
  // a dry run reads no trace: an oracle reads ahead only when it decides
  const noSteps = () => {
    throw new Error('a dry run reads no trace steps');
  };
  const { policy } = createRunPolicy(p.name, p.options ?? {}, { model, header, hardware: hw, maxBlocks, budgetBlocks: Math.max(1, budgetBlocks), futureSteps: noSteps });
  const ws = policy.weights;
  const hbm = hw.tiers[0];
  const free = hbm.capacity_GiB * GiB - hbmWeightBytes(model, ws) - hw.gpu.reserved_GiB * GiB;
  if (budgetBytes > free) {
    const weights = ws ? describeHbmWeights(model, ws, (b) => `${(b / GiB).toFixed(2)} GiB`) : `the weights of ${model.name}`;
    throw new Error(`budget ${budget}: ${(budgetBytes / GiB).toFixed(2)} GiB of KV does not fit in ${hw.name}'s HBM (${(free / GiB).toFixed(2)} GiB free after ${weights})`);
  }
  if (ws) {
    const host = hw.tiers.find((t) => t.name === ws.tier);
    const hostBytes = hostWeightBytes(model, ws);
    if (host && hostBytes > host.capacity_GiB * GiB) {
      throw new Error(`policy ${p.name}: ${(hostBytes / GiB).toFixed(2)} GiB of streamed weights do not fit in ${hw.name}'s ${host.name} (${host.capacity_GiB} GiB)`);
    }
  }
  if (budgetBlocks < 1) throw new Error(`budget ${budget}: less than one KV block per layer (${model.layers * blockBytes} bytes)`);
}

export function checkServeSweep(spec: ServeSweepSpec, file: string): SweepCheck {
  const errors: string[] = [];
  const traces = loader<true>(errors, file);
  const caches = loader<true>(errors, file);
  const hardware = loader<HardwareProfile>(errors, file);
  const models = loader<ModelSpec>(errors, file);
  const combos = comboErrors(errors, file);
  const configs = expandServeSweep(spec);
  for (const c of configs) {
    traces(`requests[${spec.requests.indexOf(c.requests)}]`, c.requests, () => {
      openRequestTrace(c.requests);
      return true;
    });
    caches(`caches[${spec.caches.indexOf(c.cache)}]`, c.cache, () => {
      getCachePolicy(c.cache);
      return true;
    });
    const hw = hardware(`hardware[${spec.hardware.indexOf(c.hardware)}]`, c.hardware, () => loadHardware(c.hardware));
    const model = models(`models[${spec.models.indexOf(c.model)}]`, c.model, () => loadModel(c.model));
    if (!hw || !model) continue;
    try {
      resolveServingTiers(hw, model, { capacityTokens: c.capacity ?? undefined });
    } catch (e) {
      combos.add(c.id, (e as Error).message);
    }
  }
  combos.flush();
  return { count: configs.length, errors };
}

/** Resolve a request-trace argument and read the start of the file to tell its format. */
function openRequestTrace(arg: string): void {
  const path = resolveRequestsArg(arg);
  if (!existsSync(path)) throw new Error(`${path}: no such request trace (or give mooncake:conversation / mooncake:synthetic)`);
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    detectRequestFormat(path, buf.subarray(0, n).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}
