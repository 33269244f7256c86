import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from '@uwdata/flechette';
import { afterAll, describe, expect, it } from 'vitest';
import { serveSweepColumns, SWEEP_COLUMNS } from '../../studies/results-schema.js';
import { runSweep } from '../../studies/run-sweep.js';
import { parseSweepSpec } from '../../studies/sweep-spec.js';
import { resultsCsv, schemaCells } from '../../studies/write-results.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-schema-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const HEADER =
  'id,status,error,trace,policy,model,hardware,hbm_budget_fraction,seed,tbt_p50_ms,tbt_p90_ms,tbt_p99_ms,tokens_per_s,stall_ms,transfer_ms,' +
  'masking_efficiency,recall_mean,recall_min,bytes_total,bytes_h2d,bytes_d2h,quant_error_mean,quant_error_max,energy_j_per_token,' +
  'needle_unavailable_steps,needle_retained,run_dir';

const spec = (policies: string[]) =>
  parseSweepSpec(
    { name: 'schema', traces: [{ generate: { prompt_tokens: 128, steps: 4, layers: 32 }, name: 'g' }], policies, budgets: ['50%'], hardware: ['h100-pcie5'], trace_steps: 0 },
    join(dir, 'schema.json'),
  );
const quiet = { workers: 0, progress: false, log: () => {} };

function arrowSchema(file: string): { fields: [string, number][]; rows: number; table: ReturnType<typeof tableFromIPC> } {
  const t = tableFromIPC(fs.readFileSync(file));
  return { fields: t.schema.fields.map((f) => [f.name, f.type.typeId]), rows: t.numRows, table: t };
}

const UTF8 = 5;
const FLOAT = 3;
const EXPECTED_ARROW: [string, number][] = HEADER.split(',').map((n) => [n, SWEEP_COLUMNS.find((c) => c.name === n)!.type === 'number' ? FLOAT : UTF8]);

describe('sweep results schema', () => {
  it('keeps every column when the first configuration fails; the failed row has its error and no metrics', async () => {
    const out = join(dir, 'first-fails');
    const { rows } = await runSweep(spec(['nope', 'uniform-int8']), { out, ...quiet });
    expect(rows.map((r) => r.status)).toEqual(['failed', 'ok']);
    const csv = fs.readFileSync(join(out, 'results.csv'), 'utf8');
    const lines = csv.split('\n');
    expect(lines[0]).toBe(HEADER);
    expect(lines.length).toBe(4);
    expect(lines[3]).toBe('');
    expect(csv.endsWith('\n') && !csv.endsWith('\n\n')).toBe(true);
    expect(lines[1]).toMatch(/^0000_g-s1_h100-pcie5_nope_50pct,failed,"unknown policy ""nope"" \(valid: [^"]+\)",g-s1\.kvt,nope,,h100-pcie5,,1(,){18}$/);
    // the quantizing policy's row fills quant_error_* and energy, the columns the first row has none of
    const ok = lines[2].split(',');
    const col = (n: string) => ok[HEADER.split(',').indexOf(n)];
    expect(Number(col('quant_error_mean'))).toBe(rows[1].quant_error_mean);
    expect(Number(col('energy_j_per_token'))).toBe(rows[1].energy_j_per_token);
    expect(Number(col('quant_error_mean'))).toBeGreaterThan(0);
    const a = arrowSchema(join(out, 'results.arrow'));
    expect(a.fields).toEqual(EXPECTED_ARROW);
    expect(a.table.getChild('quant_error_mean')!.toArray()[0]).toBe(null);
    expect(a.table.getChild('quant_error_mean')!.toArray()[1]).toBe(rows[1].quant_error_mean);
    const json = JSON.parse(fs.readFileSync(join(out, 'results.json'), 'utf8')) as Record<string, unknown>[];
    expect(json.map((r) => Object.keys(r))).toEqual([HEADER.split(','), HEADER.split(',')]);
    expect(json[0].error).toMatch(/^unknown policy "nope"/);
  });

  it('an all-failed sweep has the same columns and types', async () => {
    const out = join(dir, 'all-fail');
    await runSweep(spec(['nope']), { out, ...quiet });
    expect(fs.readFileSync(join(out, 'results.csv'), 'utf8').split('\n')[0]).toBe(HEADER);
    expect(arrowSchema(join(out, 'results.arrow')).fields).toEqual(EXPECTED_ARROW);
  });

  it('an empty shard writes a header, no rows, and the same Arrow schema', async () => {
    const out = join(dir, 'empty');
    const { rows } = await runSweep(spec(['h2o']), { out, ...quiet, shard: { index: 3, count: 4 } });
    expect(rows).toEqual([]);
    expect(fs.readFileSync(join(out, 'results.csv'), 'utf8')).toBe(HEADER + '\n');
    expect(fs.readFileSync(join(out, 'results.json'), 'utf8')).toBe('[]\n');
    const a = arrowSchema(join(out, 'results.arrow'));
    expect(a.fields).toEqual(EXPECTED_ARROW);
    expect(a.rows).toBe(0);
  });

  it('quotes CSV cells that need it and writes missing values as empty cells', () => {
    const cols = [
      { name: 'id', type: 'string' as const },
      { name: 'a', type: 'string' as const },
      { name: 'b', type: 'number' as const },
    ];
    const cells = [
      schemaCells(cols, { a: 'x,y', b: 1.5 }),
      schemaCells(cols, { a: 'say "hi"\nbye', b: Number.NaN }),
      schemaCells(cols, { a: ' pad', b: -Infinity }),
      schemaCells(cols, {}),
    ];
    expect(resultsCsv(cols, cells)).toBe('id,a,b\n,"x,y",1.5\n,"say ""hi""\nbye",\n," pad",\n,,\n');
    expect(() => schemaCells(cols, { a: 'x', c: 1, id: 'r7' })).toThrow('results row r7: column "c" is not in the results schema');
    expect(() => schemaCells(cols, { a: 1, id: 'r7' })).toThrow('results row r7: column "a" must be a string (got 1)');
  });

  it('a serving sweep has one hit_<tier> column per prefix-cache tier of its hardware', () => {
    const names = serveSweepColumns({ hardware: ['h100-pcie5', 'no-such-machine'] }).map((c) => c.name);
    // h100-pcie5: hbm + ddr5 (dram), cxl-type3 (cxl), nvme-gen5 (nvme); its hdd holds no prefix cache
    expect(names.filter((n) => n.startsWith('hit_'))).toEqual(['hit_hbm', 'hit_dram', 'hit_cxl', 'hit_nvme']);
    expect(names.slice(0, 3)).toEqual(['id', 'status', 'error']);
    expect(names[names.length - 1]).toBe('run_dir');
  });
});
