import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerServe, traceShortName } from '../../cli/commands/serve.js';
import { serveRow } from '../../serving/serve-summary.js';

const trace = [
  '{"timestamp": 0, "input_length": 1024, "output_length": 4, "hash_ids": [1, 2]}',
  '{"timestamp": 10, "input_length": 1500, "output_length": 4, "hash_ids": [1, 2, 3]}',
  '{"timestamp": 20, "input_length": 600, "output_length": 4, "hash_ids": [1, 4]}',
].join('\n');

let dir: string;
let logs: string[];
let errors: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kvtier-serve-'));
  writeFileSync(join(dir, 'hand.jsonl'), trace + '\n');
  writeFileSync(join(dir, 'broken.jsonl'), `${trace}\n{"timestamp": 30, "input_length": 10, "output_length": -1, "hash_ids": [9]}\n`);
  logs = [];
  errors = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void logs.push(a.join(' ')));
});
afterEach(() => vi.restoreAllMocks());

async function kvtier(...args: string[]): Promise<void> {
  const program = new Command('kvtier').exitOverride().configureOutput({ writeErr: (s) => void errors.push(s), writeOut: (s) => void logs.push(s) });
  registerServe(program);
  await program.parseAsync(['node', 'kvtier', ...args]);
}

/** A usage error comes through commander (exit code 1); a run-time error as a plain Error. */
async function failure(...args: string[]): Promise<Error> {
  try {
    await kvtier(...args);
  } catch (e) {
    if (e instanceof CommanderError) expect(e.exitCode).toBe(1);
    return e as Error;
  }
  throw new Error('expected the command to fail');
}

const base = (out: string) => ['serve', '--requests', join(dir, 'hand.jsonl'), '--model', 'llama-3-8b', '--hardware', 'h100-pcie5', '--out', out];

describe('kvtier serve', () => {
  it('writes summary.json with hit ratios, latency percentiles and backpressure, and requests.csv', async () => {
    const out = join(dir, 'run');
    await kvtier(...base(out), '--no-report', '--capacity-tokens', 'unbounded');
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(s.schema).toBe('kvtier-serve-summary/v1');
    // hits: 0, then blocks 1 2 (1024 tokens), then block 1 (512 tokens), of 3124 input tokens
    expect(s.prefix_hit_ratio).toBe(1536 / 3124);
    expect(s.theoretical_prefix_hit_ratio).toBe(1536 / 3124);
    expect(s.tier_hit_ratio).toEqual({ hbm: 1536 / 3124, dram: 0, cxl: 0, nvme: 0 });
    expect(s.backpressure_events).toBe(0);
    expect(s.served).toBe(3);
    for (const k of ['p50', 'p90', 'p99', 'mean', 'max']) {
      expect(s.ttft_ms[k]).toBeGreaterThan(0);
      expect(s.tbt_ms[k]).toBeGreaterThan(0);
    }
    expect(s.tiers.at(-1).capacity_tokens).toBeNull();
    const csv = readFileSync(join(out, 'requests.csv'), 'utf8').trim().split('\n');
    expect(csv).toHaveLength(4);
    expect(csv[0].split(',').slice(0, 8)).toEqual(['id', 'line', 'arrival_ms', 'status', 'reason', 'input_tokens', 'output_tokens', 'prefix_hit_tokens']);
    expect(csv[2].split(',').slice(0, 8)).toEqual(['1', '2', '10', 'served', '', '1500', '4', '1024']);
    expect(existsSync(join(out, 'index.html'))).toBe(false);
    expect(logs.join('\n')).toContain('3 requests: 3 served, 0 refused');
  });

  it('stops at a malformed line naming file, line and field, and writes nothing', async () => {
    const out = join(dir, 'never');
    const e = await failure('serve', '--requests', join(dir, 'broken.jsonl'), '--model', 'llama-3-8b', '--hardware', 'h100-pcie5', '--out', out);
    expect(e).not.toBeInstanceOf(CommanderError);
    expect(e.message).toContain(`${join(dir, 'broken.jsonl')}:4: field "output_length": must be >= 0, got -1`);
    expect(existsSync(out)).toBe(false);
  });

  it('skips and counts malformed lines with --skip-malformed', async () => {
    const out = join(dir, 'skipped');
    await kvtier('serve', '--requests', join(dir, 'broken.jsonl'), '--model', 'llama-3-8b', '--hardware', 'h100-pcie5', '--out', out, '--skip-malformed', '--no-report');
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(s.trace_skipped_lines).toBe(1);
    expect(s.requests).toBe(3);
    expect(logs.join('\n')).toContain('skipped 1 malformed line(s)');
  });

  it('refuses bad flags and an existing output without --force', async () => {
    expect((await failure(...base(join(dir, 'x')), '--capacity-tokens', 'lots')).message).toContain('capacity-tokens: expected a token count');
    expect((await failure(...base(join(dir, 'x')), '--cache', 'mru')).message).toContain('unknown cache policy "mru" (valid: lru, lfu, arc, s3fifo)');
    expect((await failure(...base(join(dir, 'x')), '--max-running', '0')).message).toContain('max-running must be an integer >= 1');
    expect((await failure('serve', '--requests', join(dir, 'hand.jsonl'), '--out', join(dir, 'x'))).message).toContain('required options --model, --hardware not specified');
    const usage = await failure('serve', 'curve', '--model', 'llama-3-8b', '--out', join(dir, 'x'));
    expect(usage).toBeInstanceOf(CommanderError);
    expect(usage.message).toContain('--model does not apply to mode "curve"');
    expect((await failure('serve', 'replay', '--out', join(dir, 'x'))).message).toContain('unknown mode "replay" (valid: run, curve, policies)');
    await kvtier(...base(join(dir, 'twice')), '--no-report');
    expect((await failure(...base(join(dir, 'twice')), '--no-report')).message).toContain('already exists; pass --force');
    await kvtier(...base(join(dir, 'twice')), '--no-report', '--force');
  });

  it('gives byte-identical outputs for the same inputs, and one flat results row', async () => {
    for (const o of ['a', 'b']) await kvtier(...base(join(dir, o)), '--no-report', '--tier-tokens', 'hbm=3000,dram=1024', '--cache', 'arc');
    for (const f of ['summary.json', 'requests.csv']) expect(readFileSync(join(dir, 'a', f), 'utf8')).toBe(readFileSync(join(dir, 'b', f), 'utf8'));
    const row = serveRow(JSON.parse(readFileSync(join(dir, 'a', 'summary.json'), 'utf8')));
    expect(Object.keys(row)).toEqual(expect.arrayContaining(['prefix_hit_ratio', 'hit_hbm', 'hit_dram', 'hit_cxl', 'hit_nvme', 'ttft_p99_ms', 'tbt_p50_ms', 'backpressure_events', 'slo_attainment']));
    expect(row.cache_policy).toBe('arc');
    expect((row.hit_hbm as number) + (row.hit_dram as number) + (row.hit_cxl as number) + (row.hit_nvme as number)).toBeCloseTo(row.prefix_hit_ratio as number, 12);
  });

  it('lists the cache policies', async () => {
    await kvtier('serve', 'policies');
    expect(logs.map((l) => l.split(' ')[0])).toEqual(['lru', 'lfu', 'arc', 's3fifo']);
  });

  it('writes the report page and charts of a run', async () => {
    const out = join(dir, 'report');
    await kvtier(...base(out), '--tier-tokens', 'hbm=100000,dram=2000');
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toContain('Where the input tokens came from');
    for (const c of ['tier-hits', 'latency-cdf', 'arrivals']) expect(existsSync(join(out, 'charts', `${c}.vl.json`))).toBe(true);
  });
});

describe('kvtier serve curve', () => {
  it('sweeps capacities per policy and writes curve.csv and the report', async () => {
    const out = join(dir, 'curve');
    await kvtier('serve', 'curve', '--requests', join(dir, 'hand.jsonl'), '--capacities', '512,1024,unbounded', '--policies', 'lru,arc', '--out', out);
    const rows = readFileSync(join(out, 'curve.csv'), 'utf8').trim().split('\n');
    expect(rows[0]).toBe('trace,policy,capacity_tokens,prefix_hit_ratio,of_theoretical');
    const ratio = (policy: string, cap: string) => Number(rows.find((r) => r.startsWith(`hand,${policy},${cap},`))!.split(',')[3]);
    expect(ratio('lru', 'Infinity')).toBeCloseTo(1536 / 3124, 6);
    // one block of room: request 2 finds block 1 (kept as the root), request 3 finds it too
    expect(ratio('lru', '512')).toBeCloseTo(1024 / 3124, 6);
    expect(ratio('belady', '512')).toBeCloseTo(1024 / 3124, 6);
    expect(existsSync(join(out, 'charts', 'hit-curve.svg'))).toBe(true);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('Hit ratio vs capacity');
  });

  it('names traces by file without the _trace suffix', () => {
    expect(traceShortName('mooncake:conversation')).toBe('conversation');
    expect(traceShortName('/x/synthetic_trace.jsonl')).toBe('synthetic');
    expect(traceShortName('azure-sample.csv')).toBe('azure-sample');
  });
});
