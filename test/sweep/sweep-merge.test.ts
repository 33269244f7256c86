import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeShards } from '../../studies/merge-shards.js';
import { runSweepFile } from '../../studies/run-sweep.js';
import { SWEEP_REPORTERS } from '../../reports/sweep-reporters.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-merge-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sweepFile = (name: string, budgets: string[]) => {
  const f = join(dir, `${name}.json`);
  fs.writeFileSync(
    f,
    JSON.stringify({ name: 'merge', traces: [{ generate: { prompt_tokens: 128, steps: 4 }, name: 'g' }], policies: ['full', 'h2o', 'nope'], budgets, hardware: ['h100-pcie5'], seeds: [1, 2], trace_steps: 0 }),
  );
  return f;
};
const file = sweepFile('merge', ['20%', '50%']);
const quiet = { workers: 0, progress: false, log: () => {} };
const TABLES = ['results.csv', 'results.json', 'results.arrow'];

beforeAll(async () => {
  await runSweepFile(file, { out: join(dir, 'whole'), ...quiet });
  await runSweepFile(file, { out: join(dir, 's0'), ...quiet, shard: { index: 0, count: 2 } });
  await runSweepFile(file, { out: join(dir, 's1'), ...quiet, shard: { index: 1, count: 2 } });
}, 120_000);

describe('sweep merge', () => {
  it('merging the 2 shards gives the unsharded tables byte for byte, with every run', async () => {
    // shards given in any order
    const r = await mergeShards([join(dir, 's1'), join(dir, 's0')], join(dir, 'merged'), { report: SWEEP_REPORTERS });
    expect(r).toEqual({ dir: join(dir, 'merged'), rows: 10, failed: 4 });
    for (const t of TABLES) expect(fs.readFileSync(join(dir, 'merged', t)), t).toEqual(fs.readFileSync(join(dir, 'whole', t)));
    expect(fs.readdirSync(join(dir, 'merged', 'runs')).sort()).toEqual(fs.readdirSync(join(dir, 'whole', 'runs')).sort());
    expect(fs.readdirSync(join(dir, 'merged', 'traces')).sort()).toEqual(['g-s1.kvt', 'g-s2.kvt']);
    expect(fs.existsSync(join(dir, 'merged', 'index.html'))).toBe(true);
    expect(fs.existsSync(join(dir, 's0', 'index.html'))).toBe(false);
    const meta = JSON.parse(fs.readFileSync(join(dir, 'merged', 'sweep.json'), 'utf8'));
    expect(meta.shard).toBe(null);
    expect(meta.merged_from.map((m: { shard: unknown }) => m.shard)).toEqual([
      { index: 1, count: 2 },
      { index: 0, count: 2 },
    ]);
  });

  it('says which shards are missing', async () => {
    await expect(mergeShards([join(dir, 's1')], join(dir, 'm-missing'))).rejects.toThrow('missing shards: 0/2 (have 1/2)');
    expect(fs.existsSync(join(dir, 'm-missing'))).toBe(false);
  });

  it('refuses a shard given twice, a whole sweep, and shards of another sweep', async () => {
    await expect(mergeShards([join(dir, 's0'), join(dir, 's1'), join(dir, 's0')], join(dir, 'm-dup'))).rejects.toThrow(
      `shard 0/2 is given twice: ${join(dir, 's0')} and ${join(dir, 's0')}`,
    );
    await expect(mergeShards([join(dir, 's0'), join(dir, 'whole')], join(dir, 'm-whole'))).rejects.toThrow(
      `${join(dir, 'whole')} is a whole sweep, not a shard (it was run without --shard i/N); nothing to merge`,
    );
    const other = sweepFile('other', ['20%', '60%']);
    await runSweepFile(other, { out: join(dir, 'o1'), ...quiet, shard: { index: 1, count: 2 } });
    await expect(mergeShards([join(dir, 's0'), join(dir, 'o1')], join(dir, 'm-other'))).rejects.toThrow(
      `${join(dir, 'o1')} is a shard of another sweep than ${join(dir, 's0')} (their sweep.json "spec" differ)`,
    );
    for (const m of ['m-dup', 'm-whole', 'm-other']) expect(fs.existsSync(join(dir, m))).toBe(false);
  });

  it('refuses a shard whose rows are not the configurations of its shard', async () => {
    const bad = join(dir, 's1-edited');
    fs.cpSync(join(dir, 's1'), bad, { recursive: true });
    const rows = JSON.parse(fs.readFileSync(join(bad, 'results.json'), 'utf8'));
    fs.writeFileSync(join(bad, 'results.json'), JSON.stringify(rows.slice(1)));
    await expect(mergeShards([join(dir, 's0'), bad], join(dir, 'm-bad'))).rejects.toThrow(
      `${bad}: its results are not the configurations of shard 1/2; missing ${rows[0].id}`,
    );
  });
});
