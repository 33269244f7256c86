/**
 * Runs a sweep: generates the grid's synthetic traces, runs every configuration in parallel on a
 * piscina pool (one worker per core by default, results kept in grid order whatever finishes first),
 * records failures as rows with their error, writes results.{json,csv,arrow} and, given a reporter
 * (opts.report), the report page.
 * Finished configurations are saved as they finish, so a killed or interrupted sweep continues where
 * it stopped (durable-sweep.ts); the sweep directory appears whole at the end.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { generateTrace } from '../traces/generator.js';
import type { SweepRow } from '../sim/metrics/summary.js';
import { codeFingerprint } from './code-fingerprint.js';
import { configKey, FileDigests } from './config-key.js';
import { runDurableSweep, type DurableOptions } from './durable-sweep.js';
import { serveSweepColumns, SWEEP_COLUMNS } from './results-schema.js';
import { runServeConfig, type ServeSweepRow } from './serve-sweep.js';
import type { SweepReporter } from './sweep-reporter.js';
import { expandServeSweep, type ServeSweepConfig, type ServeSweepSpec } from './serve-sweep-spec.js';
import { expandSweep, readAnySweepSpec, type SweepConfig, type SweepSpec } from './sweep-spec.js';
import { runSweepTask, type SweepTask } from './sweep-worker.js';

export interface SweepOptions extends DurableOptions {
  /** run only configurations i where index % N === i (deterministic sharding) */
  shard?: { index: number; count: number };
  /** writes index.html; without it the sweep writes no page */
  report?: SweepReporter;
}

export interface SweepResult<Row> {
  rows: Row[];
  dir: string;
  /** configurations whose saved results an interrupted run left and this run reused */
  reused: number;
}

export async function runSweepFile(file: string, opts: SweepOptions): Promise<SweepResult<{ id: string; status: string; error: string }>> {
  const spec = readAnySweepSpec(file);
  return 'kind' in spec && spec.kind === 'serve' ? runServeSweep(spec, opts, file) : runSweep(spec as SweepSpec, opts, file);
}

function inShard<C extends { index: number }>(configs: C[], shard: SweepOptions['shard']): C[] {
  return shard ? configs.filter((c) => c.index % shard.count === shard.index) : configs;
}

const isPath = (s: string) => s.includes('/');

/** What decides an attention configuration's result (its key hashes this). */
export function attentionConfigIdentity(spec: SweepSpec, c: SweepConfig, digests: FileDigests): unknown {
  return {
    schema: 'kvtier-sweep-config/v1',
    kind: 'attention',
    trace: c.trace.generate ? { generate: c.trace.generate, seed: c.seed } : digests.input(c.trace.path!, () => true),
    policy: c.policy.name,
    policy_options: c.policy.options ?? {},
    budget: c.budget,
    hardware: digests.input(c.hardware, isPath),
    model: digests.input(c.model, isPath),
    trace_steps: spec.trace_steps,
    copy_mode: spec.copy_mode ?? null,
  };
}

/** What decides a serving configuration's result. */
export function serveConfigIdentity(spec: ServeSweepSpec, c: ServeSweepConfig, digests: FileDigests): unknown {
  return {
    schema: 'kvtier-sweep-config/v1',
    kind: 'serve',
    requests: digests.input(c.requests, isPath),
    cache: c.cache,
    capacity: c.capacity,
    hardware: digests.input(c.hardware, isPath),
    model: digests.input(c.model, isPath),
    time_scale: c.time_scale,
    limit: spec.limit ?? null,
    options: spec.options,
  };
}

function sweepJson(source: string, spec: object, opts: SweepOptions): string {
  const fp = codeFingerprint();
  return JSON.stringify({ source, spec, shard: opts.shard ?? null, kvtier: { version: fp.version, code: fp.code } }, null, 2) + '\n';
}

/** A serving sweep: same directory contract (results.*, runs/, index.html), same pool. */
export async function runServeSweep(spec: ServeSweepSpec, opts: SweepOptions, source = '(inline)'): Promise<SweepResult<ServeSweepRow>> {
  const configs = inShard(expandServeSweep(spec), opts.shard);
  const digests = new FileDigests();
  const byId = new Map(configs.map((c) => [c.id, c]));
  type Task = { spec: ServeSweepSpec; config: ServeSweepConfig; dir: string };
  return runDurableSweep<Task, ServeSweepRow>(
    {
      jobs: configs.map((c) => ({ id: c.id, key: configKey(serveConfigIdentity(spec, c, digests)) })),
      columns: serveSweepColumns(spec),
      worker: 'serve',
      fingerprint: codeFingerprint(),
      inputs: [source, ...spec.requests.filter(isPath)],
      prepare: (dir, pending) => pending.map((j) => ({ spec, config: byId.get(j.id)!, dir })),
      runInline: (t) => runServeConfig(t.spec, t.config, t.dir),
      finish: async (dir, rows) => {
        fs.writeFileSync(join(dir, 'sweep.json'), sweepJson(source, spec, opts));
        await opts.report?.serve(dir, spec, rows, `kvtier sweep ${source}`);
      },
    },
    opts,
  );
}

export async function runSweep(spec: SweepSpec, opts: SweepOptions, source = '(inline)'): Promise<SweepResult<SweepRow>> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const configs = inShard(expandSweep(spec), opts.shard);
  const digests = new FileDigests();
  const byId = new Map(configs.map((c) => [c.id, c]));
  const inputs = [source, ...spec.traces.flatMap((t) => (t.path ? [t.path] : [])), ...spec.hardware.filter((h) => h.endsWith('.json'))];
  return runDurableSweep<SweepTask, SweepRow>(
    {
      jobs: configs.map((c) => ({ id: c.id, key: configKey(attentionConfigIdentity(spec, c, digests)) })),
      columns: SWEEP_COLUMNS,
      worker: 'sweep',
      fingerprint: codeFingerprint(),
      inputs,
      prepare: (dir, pending) => {
        const paths = prepareTraces(configs, dir, log);
        return pending.map((j) => sweepTask(spec, byId.get(j.id)!, dir, paths));
      },
      runInline: runSweepTask,
      finish: async (dir, rows) => {
        fs.writeFileSync(join(dir, 'sweep.json'), sweepJson(source, spec, opts));
        await opts.report?.attention(dir, spec.name, rows, `kvtier sweep ${source}`);
      },
    },
    opts,
  );
}

/**
 * Generate every generated trace of the shard (each run, so the sweep directory holds exactly the
 * traces of its configurations): to a temporary name, then renamed. Returns trace name -> path.
 */
function prepareTraces(configs: SweepConfig[], dir: string, log: (l: string) => void): Map<string, string> {
  const made = new Map<string, string>();
  const tdir = join(dir, 'traces');
  for (const c of configs) {
    if (!c.trace.generate || made.has(c.trace.name)) continue;
    fs.mkdirSync(tdir, { recursive: true });
    const p = join(tdir, `${c.trace.name}.kvt`);
    const tmp = join(tdir, `.${c.trace.name}.kvt.tmp-${process.pid}`);
    fs.rmSync(tmp, { force: true });
    generateTrace(tmp, { ...c.trace.generate, seed: c.seed } as never);
    fs.renameSync(tmp, p);
    log(`generated trace ${c.trace.name}`);
    made.set(c.trace.name, p);
  }
  if (fs.existsSync(tdir)) for (const e of fs.readdirSync(tdir)) if (![...made.values()].includes(join(tdir, e))) fs.rmSync(join(tdir, e), { recursive: true, force: true });
  return made;
}

function sweepTask(spec: SweepSpec, c: SweepConfig, dir: string, traces: Map<string, string>): SweepTask {
  return {
    id: c.id,
    seed: c.seed,
    sweepDir: dir,
    budgetLabel: c.budget,
    config: {
      trace: c.trace.generate ? traces.get(c.trace.name)! : c.trace.path!,
      policy: c.policy.name,
      policy_options: c.policy.options,
      model: c.model ?? undefined,
      hardware: c.hardware,
      hbm_budget: c.budget,
      trace_steps: spec.trace_steps,
      copy_mode: spec.copy_mode,
    },
  };
}
