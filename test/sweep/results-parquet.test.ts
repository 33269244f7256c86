/**
 * results.parquet, read back by DuckDB: the rows, the schema's columns in order with Parquet types
 * (UTF8 -> VARCHAR, DOUBLE), nulls where the CSV has empty cells, and values equal to the CSV's.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SWEEP_COLUMNS } from '../../studies/results-schema.js';
import { runSweep } from '../../studies/run-sweep.js';
import { parseSweepSpec } from '../../studies/sweep-spec.js';
import { writeResults } from '../../studies/write-results.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-parquet-'));
let db: DuckDBInstance;
let con: DuckDBConnection;
beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
  con = await db.connect();
});
afterAll(() => {
  con?.closeSync();
  db?.closeSync();
  fs.rmSync(dir, { recursive: true, force: true });
});

const quote = (file: string) => `'${file.replace(/'/g, "''")}'`;
async function query(sql: string): Promise<Record<string, unknown>[]> {
  return (await con.runAndReadAll(sql)).getRowObjectsJS();
}
const describeParquet = async (file: string) =>
  (await query(`DESCRIBE SELECT * FROM read_parquet(${quote(file)})`)).map((r) => [r.column_name, r.column_type]);

const quiet = { workers: 0, progress: false, log: () => {} };
const spec = (policies: string[]) =>
  parseSweepSpec(
    { name: 'pq', traces: [{ generate: { prompt_tokens: 128, steps: 4, layers: 32 }, name: 'g' }], policies, budgets: ['25%', '50%'], hardware: ['h100-pcie5'], trace_steps: 0 },
    join(dir, 'pq.json'),
  );

describe('results.parquet', () => {
  it('a small sweep: DuckDB reads its rows, columns, types and the CSV values', async () => {
    const out = join(dir, 'sweep');
    const { rows } = await runSweep(spec(['nope', 'h2o']), { out, ...quiet });
    expect(rows.map((r) => r.status)).toEqual(['failed', 'failed', 'ok', 'ok']);
    const file = join(out, 'results.parquet');

    expect(await describeParquet(file)).toEqual(SWEEP_COLUMNS.map((c) => [c.name, c.type === 'number' ? 'DOUBLE' : 'VARCHAR']));
    expect(await query(`SELECT count(*)::INTEGER AS n FROM read_parquet(${quote(file)})`)).toEqual([{ n: 4 }]);

    const csv = fs.readFileSync(join(out, 'results.csv'), 'utf8').split('\n');
    const header = csv[0].split(',');
    const okLine = csv.find((l) => l.startsWith('0003_'))!.split(',');
    const cell = (n: string) => okLine[header.indexOf(n)];
    const [got] = await query(`SELECT id, policy, recall_mean, tbt_p99_ms, bytes_total FROM read_parquet(${quote(file)}) WHERE status = 'ok' AND hbm_budget_fraction = 0.5`);
    expect(got).toEqual({
      id: cell('id'),
      policy: 'h2o',
      recall_mean: Number(cell('recall_mean')),
      tbt_p99_ms: Number(cell('tbt_p99_ms')),
      bytes_total: Number(cell('bytes_total')),
    });
    expect(got.recall_mean).toBe(rows[3].recall_mean);

    // a failed row: its error text (with quotes and commas) as JSON has it, and no metrics
    const json = JSON.parse(fs.readFileSync(join(out, 'results.json'), 'utf8')) as Record<string, unknown>[];
    const failed = await query(`SELECT error, recall_mean, model FROM read_parquet(${quote(file)}) WHERE status = 'failed' ORDER BY id`);
    expect(failed).toEqual([0, 1].map((i) => ({ error: json[i].error, recall_mean: null, model: json[i].model })));
    expect(String(failed[0].error)).toMatch(/^unknown policy "nope" \(valid: .*, .*\)$/);
  });

  it('writeResults: text that needs quoting in CSV, non-ASCII, missing and non-finite numbers, and no rows', async () => {
    const cols = [
      { name: 'id', type: 'string' as const },
      { name: 'note', type: 'string' as const },
      { name: 'x', type: 'number' as const },
    ];
    const out = join(dir, 'direct');
    fs.mkdirSync(out);
    writeResults(out, cols, [
      { id: 'a', note: 'say "hi",\nbye', x: 1.25 },
      { id: 'b', note: 'μs ≤ 2', x: Number.NaN },
      { id: 'c', x: -0.5 },
    ]);
    const file = join(out, 'results.parquet');
    expect(await describeParquet(file)).toEqual([
      ['id', 'VARCHAR'],
      ['note', 'VARCHAR'],
      ['x', 'DOUBLE'],
    ]);
    expect(await query(`SELECT * FROM read_parquet(${quote(file)})`)).toEqual([
      { id: 'a', note: 'say "hi",\nbye', x: 1.25 },
      { id: 'b', note: 'μs ≤ 2', x: null },
      { id: 'c', note: null, x: -0.5 },
    ]);
    expect(await query(`SELECT sum(x) AS s FROM read_parquet(${quote(file)})`)).toEqual([{ s: 0.75 }]);

    const empty = join(dir, 'empty');
    fs.mkdirSync(empty);
    writeResults(empty, cols, []);
    expect(await describeParquet(join(empty, 'results.parquet'))).toEqual([
      ['id', 'VARCHAR'],
      ['note', 'VARCHAR'],
      ['x', 'DOUBLE'],
    ]);
    expect(await query(`SELECT count(*)::INTEGER AS n FROM read_parquet(${quote(join(empty, 'results.parquet'))})`)).toEqual([{ n: 0 }]);
  });

  it('the same rows give the same bytes', () => {
    const cols = [
      { name: 'id', type: 'string' as const },
      { name: 'x', type: 'number' as const },
    ];
    const a = join(dir, 'det-a');
    const b = join(dir, 'det-b');
    for (const d of [a, b]) {
      fs.mkdirSync(d);
      writeResults(d, cols, [{ id: 'r', x: 3 }, { id: 's' }]);
    }
    expect(fs.readFileSync(join(a, 'results.parquet'))).toEqual(fs.readFileSync(join(b, 'results.parquet')));
  });
});
