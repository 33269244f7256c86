/**
 * `kvtier sweep merge`: combines the output directories of `kvtier sweep --shard i/N` runs of one
 * sweep into one sweep directory (results tables in grid order, runs/, traces/, report). Refuses
 * shards of different sweeps, shard counts or kvtier builds, a shard given twice, and a shard whose
 * rows are not the configurations it should hold; names the shards that are missing.
 */
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import type { SweepRow } from '../sim/metrics/summary.js';
import { writeDirAtomicallyAsync } from '../sim/output-dir.js';
import { canonicalJson } from './config-key.js';
import { serveSweepColumns, SWEEP_COLUMNS, type Column } from './results-schema.js';
import type { ServeSweepRow } from './serve-sweep.js';
import { expandServeSweep, type ServeSweepSpec } from './serve-sweep-spec.js';
import type { SweepReporter } from './sweep-reporter.js';
import { expandSweep, type SweepSpec } from './sweep-spec.js';
import { writeResults } from './write-results.js';

interface ShardDir {
  dir: string;
  source: string;
  spec: SweepSpec | ServeSweepSpec;
  shard: { index: number; count: number } | null;
  kvtier: { version: string; code: string } | null;
  rows: Record<string, unknown>[];
}

function readShard(dir: string): ShardDir {
  const meta = join(dir, 'sweep.json');
  if (!fs.existsSync(meta)) throw new Error(`${dir}: no sweep.json (is this a directory written by "kvtier sweep"?)`);
  const m = JSON.parse(fs.readFileSync(meta, 'utf8')) as Partial<ShardDir>;
  const res = join(dir, 'results.json');
  if (!fs.existsSync(res)) throw new Error(`${dir}: no results.json (an unfinished shard? run it to the end first)`);
  const rows = JSON.parse(fs.readFileSync(res, 'utf8'));
  if (!Array.isArray(rows)) throw new Error(`${res}: expected a list of result rows`);
  return { dir, source: String(m.source ?? ''), spec: m.spec as ShardDir['spec'], shard: m.shard ?? null, kvtier: m.kvtier ?? null, rows };
}

export interface MergeResult {
  dir: string;
  rows: number;
  failed: number;
}

export async function mergeShards(dirs: string[], out: string, opts: { force?: boolean; report?: SweepReporter } = {}): Promise<MergeResult> {
  if (dirs.length === 0) throw new Error('sweep merge: give the shard directories to merge');
  const shards = dirs.map((d) => readShard(resolve(d)));
  const first = shards[0];
  for (const s of shards) {
    if (!s.shard) throw new Error(`${s.dir} is a whole sweep, not a shard (it was run without --shard i/N); nothing to merge`);
  }
  const count = first.shard!.count;
  const specJson = canonicalJson(first.spec);
  for (const s of shards.slice(1)) {
    if (canonicalJson(s.spec) !== specJson) throw new Error(`${s.dir} is a shard of another sweep than ${first.dir} (their sweep.json "spec" differ)`);
    if (s.shard!.count !== count) throw new Error(`${s.dir} is shard ${s.shard!.index}/${s.shard!.count} but ${first.dir} is shard ${first.shard!.index}/${count}: shard counts differ`);
    if (canonicalJson(s.kvtier) !== canonicalJson(first.kvtier)) {
      throw new Error(`${s.dir} was computed by kvtier ${fmtBuild(s.kvtier)} but ${first.dir} by ${fmtBuild(first.kvtier)}; rerun the shards with one build`);
    }
  }
  const byIndex = new Map<number, ShardDir>();
  for (const s of shards) {
    const prev = byIndex.get(s.shard!.index);
    if (prev) throw new Error(`shard ${s.shard!.index}/${count} is given twice: ${prev.dir} and ${s.dir}`);
    byIndex.set(s.shard!.index, s);
  }
  const missing = [...Array(count).keys()].filter((i) => !byIndex.has(i));
  if (missing.length) throw new Error(`missing shards: ${missing.map((i) => `${i}/${count}`).join(', ')} (have ${[...byIndex.keys()].sort((a, b) => a - b).map((i) => `${i}/${count}`).join(', ')})`);

  const serve = (first.spec as ServeSweepSpec).kind === 'serve';
  const configs: { index: number; id: string }[] = serve ? expandServeSweep(first.spec as ServeSweepSpec) : expandSweep(first.spec as SweepSpec);
  const rowsById = new Map<string, { row: Record<string, unknown>; shard: ShardDir }>();
  for (const s of shards) {
    const want = configs.filter((c) => c.index % count === s.shard!.index).map((c) => c.id);
    const have = s.rows.map((r) => String(r.id));
    if (canonicalJson(want) !== canonicalJson(have)) {
      const extra = have.filter((id) => !want.includes(id));
      const lacking = want.filter((id) => !have.includes(id));
      throw new Error(
        `${s.dir}: its results are not the configurations of shard ${s.shard!.index}/${count}` +
          (lacking.length ? `; missing ${lacking.slice(0, 3).join(', ')}${lacking.length > 3 ? ` and ${lacking.length - 3} more` : ''}` : '') +
          (extra.length ? `; unexpected ${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ` and ${extra.length - 3} more` : ''}` : ''),
      );
    }
    for (const r of s.rows) rowsById.set(String(r.id), { row: r, shard: s });
  }
  const columns: readonly Column[] = serve ? serveSweepColumns(first.spec as ServeSweepSpec) : SWEEP_COLUMNS;
  const merged = configs.map((c) => rowsById.get(c.id)!);
  const rows = merged.map((m) => fromJsonRow(m.row, columns, serve));
  await writeDirAtomicallyAsync(
    out,
    Boolean(opts.force),
    async (tmp) => {
      for (const m of merged) {
        const runDir = m.row.run_dir;
        if (typeof runDir === 'string' && runDir !== '') fs.cpSync(join(m.shard.dir, runDir), join(tmp, runDir), { recursive: true });
      }
      for (const s of shards) {
        const traces = join(s.dir, 'traces');
        if (!fs.existsSync(traces)) continue;
        for (const t of fs.readdirSync(traces)) if (!fs.existsSync(join(tmp, 'traces', t))) fs.cpSync(join(traces, t), join(tmp, 'traces', t));
      }
      writeResults(tmp, columns, rows);
      const meta = { source: first.source, spec: first.spec, shard: null, kvtier: first.kvtier, merged_from: shards.map((s) => ({ dir: s.dir, shard: s.shard })) };
      fs.writeFileSync(join(tmp, 'sweep.json'), JSON.stringify(meta, null, 2) + '\n');
      const by = `kvtier sweep merge (${count} shards of ${first.source})`;
      if (serve) await opts.report?.serve(tmp, first.spec as ServeSweepSpec, rows as ServeSweepRow[], by);
      else await opts.report?.attention(tmp, (first.spec as SweepSpec).name, rows as unknown as SweepRow[], by);
    },
    shards.map((s) => s.dir),
  );
  return { dir: out, rows: rows.length, failed: rows.filter((r) => r.status !== 'ok').length };
}

function fmtBuild(k: ShardDir['kvtier']): string {
  return k ? `${k.version} (code ${k.code})` : '(unknown build)';
}

/** results.json writes a missing number as null; attention rows carry NaN in memory (as a fresh run's). */
function fromJsonRow(row: Record<string, unknown>, columns: readonly Column[], serve: boolean): Record<string, unknown> {
  if (serve) return row;
  const out: Record<string, unknown> = {};
  for (const c of columns) {
    const v = row[c.name];
    out[c.name] = (v === null || v === undefined) && c.type === 'number' ? Number.NaN : (v ?? '');
  }
  return out;
}
