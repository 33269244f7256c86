/**
 * Replays hand-made traces (tiny machine: 4-token blocks of 64 B) through a policy and logs every
 * action it asked for, so that tests can assert the exact blocks kept, demoted, prefetched, evicted.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KVCache } from '../../sim/kv-cache.js';
import { QualityMeter, type StepQuality } from '../../sim/quality/quality-meter.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Actions, Policy, PolicyDefinition, PolicySetup, PolicyView } from '../../policies/policy.js';
import { resolveOptions } from '../../policies/registry.js';
import type { TraceHeader, TraceStep } from '../../traces/format.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { openTrace } from '../../traces/trace-reader.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

export interface LoggedAction {
  step: number;
  layer: number;
  what: string;
  args: number[];
  ok: boolean | undefined;
}

export interface ReplayOptions {
  prompt?: number;
  steps?: number;
  layers?: number;
  /** per (step, layer, nBlocks) masses; default uniform */
  massOf?: (s: number, l: number, n: number) => number[];
  /** per (layer, block) key norm; default 1 */
  normOf?: (l: number, b: number) => number;
  options?: Record<string, unknown>;
  /** tier capacities in blocks (default: HBM = budget, others unlimited) */
  dramBlocks?: number;
  header?: (h: TraceHeader) => TraceHeader;
  /** use this header instead of the tiny one (e.g. a generated trace's) */
  fullHeader?: TraceHeader;
  /** replay these steps instead of dense ones built from massOf */
  trace?: TraceStep[];
  /** called before the policy decides, with what it will see (the actions it asks for come after) */
  beforeDecide?: (v: PolicyView, cache: KVCache) => void;
  /** called after every decode step with its result and the cache as the step left it */
  onStep?: (r: StepResult, cache: KVCache) => void;
}

let seq = 0;
export function writeTrace(h: TraceHeader, steps: TraceStep[]): string {
  const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-pol-'));
  const path = join(dir, `t${seq++}.kvt`);
  const w = new TraceWriter(path, h, { overwrite: true });
  for (const s of steps) w.writeStep(s);
  w.close();
  return path;
}

/** Every step of a trace file, read back from the file (a fresh pass per call). */
export function* readSteps(path: string): Generator<TraceStep> {
  const r = openTrace(path);
  try {
    yield* r;
  } finally {
    r.close();
  }
}

export function replayPolicy(def: PolicyDefinition<any>, budgetBlocks: number, o: ReplayOptions = {}) {
  let h = o.fullHeader ?? tinyHeader(o.prompt ?? 8, o.steps ?? 2, o.layers ?? 2);
  if (o.header) h = o.header(h);
  const trace =
    o.trace ??
    denseSteps(h, o.massOf ?? ((_s, _l, n) => Array(n).fill(1 / n))).map((s) => {
      if (o.normOf) for (let l = 0; l < h.layers; l++) s.layers[l].norms = Float32Array.from(s.layers[l].norms, (_, i) => o.normOf!(l, s.layers[l].normFrom + i));
      return s;
    });
  const maxBlocks = trace[trace.length - 1].layers[0].nBlocks;
  const blockBytes = 2 * 2 * tinyModel.kv_heads * tinyModel.head_dim * h.block_size;
  const cache = new KVCache(tinyModel, h.block_size, h.layers, maxBlocks, [
    { name: 'hbm', capacityBytes: h.layers * blockBytes * budgetBlocks },
    { name: 'dram', capacityBytes: o.dramBlocks !== undefined ? o.dramBlocks * blockBytes * h.layers : 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const tracePath = def.oracle ? writeTrace(h, trace) : '';
  const futureSteps = def.oracle ? () => readSteps(tracePath) : undefined;
  const setup: PolicySetup = {
    model: { ...tinyModel, layers: h.layers },
    header: h,
    layers: h.layers,
    maxBlocks,
    blockSize: h.block_size,
    budgetBlocks,
    tiers: cache.tierNames,
    futureSteps,
    quantRelError: (bits, groupSize, rotation) => defaultErrorTable().relError(bits, groupSize, rotation),
  };
  const inner = def.create(resolveOptions(def, o.options ?? {}), setup);
  const log: LoggedAction[] = [];
  let cur = { step: -1, layer: 0 };
  const policy: Policy = {
    name: inner.name,
    quant: inner.quant,
    decide(v, act) {
      o.beforeDecide?.(v, cache);
      cur = { step: v.step, layer: v.layer };
      const rec =
        (what: keyof Actions) =>
        (...args: number[]) => {
          const ok = (act[what] as (...a: number[]) => boolean | void)(...args);
          log.push({ ...cur, what, args, ok: ok === undefined ? undefined : ok });
          return ok as never;
        };
      const proxy: Actions = {
        evict: rec('evict'),
        demote: (l, b, tier, bits) => {
          const ok = act.demote(l, b, tier, bits);
          log.push({ ...cur, what: `demote:${tier}:${bits}`, args: [l, b], ok });
          return ok;
        },
        promote: rec('promote'),
        prefetch: rec('prefetch'),
        prefetchOffloaded: rec('prefetchOffloaded'),
        pin: rec('pin'),
        unpin: rec('unpin'),
        skip: (b) => {
          log.push({ ...cur, what: 'skip', args: [v.layer, b], ok: undefined });
          act.skip(b);
        },
        // logged as the skip(b) calls it stands for, in block order
        skipExcept: (keep, scope) => {
          const minTier = scope === 'all' ? 0 : 1;
          for (let b = 0; b < cache.created[v.layer]; b++) {
            if (cache.tierOf(v.layer, b) >= minTier && !(keep !== null && b < keep.length && keep[b] !== 0)) log.push({ ...cur, what: 'skip', args: [v.layer, b], ok: undefined });
          }
          return act.skipExcept(keep, scope);
        },
        skipExceptListed: (blocks, count, scope) => {
          const kept = new Set(Array.from({ length: count }, (_, i) => blocks[i]));
          const minTier = scope === 'all' ? 0 : 1;
          for (let b = 0; b < cache.created[v.layer]; b++) {
            if (cache.tierOf(v.layer, b) >= minTier && !kept.has(b)) log.push({ ...cur, what: 'skip', args: [v.layer, b], ok: undefined });
          }
          return act.skipExceptListed(blocks, count, scope);
        },
      };
      inner.decide(v, proxy);
    },
    observe: (obs) => inner.observe(obs),
  };
  const ex = new SimExecutor(tinyHardware(), { ...tinyModel, layers: h.layers }, { traceSteps: 0 });
  const driver = new ReplayDriver(h, cache, policy, ex, budgetBlocks, 1e12);
  const quality = new QualityMeter(h, cache, policy);
  driver.layerHook = (s, l, obs, la) => quality.layer(s, l, obs, la);
  const results: StepResult[] = [];
  const qualities: StepQuality[] = [];
  driver.run(trace, (r) => {
    o.onStep?.(r, cache);
    results.push(r);
    qualities.push(quality.endStep());
  });
  cache.audit();
  // the log's actions by kind and step, in log order (built again whenever the log has grown)
  let byKindStep = new Map<string, LoggedAction[]>();
  let indexed = -1;
  /** successful actions of one kind at one step (and layer), as "layer:block" strings, sorted */
  const acts = (what: string, step: number, layer?: number) => {
    if (indexed !== log.length) {
      byKindStep = new Map();
      for (const a of log) {
        const key = `${a.what}@${a.step}`;
        const list = byKindStep.get(key);
        if (list) list.push(a);
        else byKindStep.set(key, [a]);
      }
      indexed = log.length;
    }
    return (byKindStep.get(`${what}@${step}`) ?? []).filter((a) => (layer === undefined || a.layer === layer) && a.ok !== false).map((a) => `${a.args[0]}:${a.args[1]}`)
      .sort((x, y) => Number(x.split(':')[0]) - Number(y.split(':')[0]) || Number(x.split(':')[1]) - Number(y.split(':')[1]));
  };
  /** tier index of each block of a layer (-2 dropped) */
  const tiers = (l: number) => Array.from({ length: cache.created[l] }, (_, b) => cache.tierOf(l, b));
  const bits = (l: number) => Array.from({ length: cache.created[l] }, (_, b) => cache.bitsOf(l, b));
  return { results, qualities, cache, driver, log, acts, tiers, bits, quality, header: h, trace };
}
