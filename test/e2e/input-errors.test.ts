/**
 * Bad input through the real command line (bin/kvtier.js, which runs the compiled dist/; build it
 * with `npm run build`): a non-zero exit, one `kvtier: error:` line naming the path (and the step,
 * layer, group and field, or the valid choices), no stack trace, and no output passed off as
 * complete. And output to a closed pipe ends quietly.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDistFresh } from '../helpers/dist-fresh.js';
import { generateTrace } from '../../traces/generator.js';
import { patchRow } from '../traces/patch-kvt.js';

// these tests spawn bin/kvtier.js, which runs dist/: it must be the code the sources compile to
beforeAll(assertDistFresh);

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-input-errors-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const MODEL = resolve('test/fixtures/tiny-model.json');
const HW = resolve('test/fixtures/tiny-hardware.json');
const TINY = ['--model', MODEL, '--hardware', HW];

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

function kvtier(...args: string[]): Ran {
  const r = spawnSync(process.execPath, ['bin/kvtier.js', ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Exit 1, stdout empty, stderr exactly one error line (no stack trace, no usage dump). */
function expectOneError(r: Ran, message: string): void {
  expect(r.stderr).toBe(`kvtier: error: ${message}\n`);
  expect(r.stdout).toBe('');
  expect(r.status).toBe(1);
}

// a small generated trace (tiny model: 2 layers x 2 KV groups, top 6 of 16..21 blocks) and copies
// of it with one record's remainder set to NaN, -0.5 and 5.0, the record checksum recomputed
const good = join(dir, 'good.kvt');
generateTrace(good, { model: 'tiny', layers: 2, kv_groups: 2, prompt_tokens: 60, steps: 6, block_size: 4, encoding: 'topk', topk: 6, seed: 7 });
const goodBytes = new Uint8Array(fs.readFileSync(good));
const BAD = (
  [
    [NaN, 'NaN', 'nan'],
    [-0.5, '-0.5', 'neg'],
    [5.0, '5', 'five'],
  ] as const
).map(([value, shown, name]) => {
  const { bytes, place } = patchRow(goodBytes, 3, 3, 'remainder', value);
  const file = join(dir, `remainder-${name}.kvt`);
  fs.writeFileSync(file, bytes);
  return { file, name, message: `${file}: record for step 3 at byte ${place.recordAt}: layer 1 group 1: field 'remainder': expected a finite number in [0, 1], got ${shown}` };
});

describe('a trace value that trace validate refuses is refused by every command that reads traces', () => {
  it('the good trace runs', () => {
    const r = kvtier('run', '--trace', good, '--policy', 'h2o', ...TINY, '--hbm-budget', '50%', '--out', join(dir, 'run-good'));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(fs.existsSync(join(dir, 'run-good', 'summary.json'))).toBe(true);
  });

  for (const b of BAD) {
    it(`trace validate, run and trace stats on a remainder of ${b.name}: exit 1, the message, nothing written`, () => {
      expectOneError(kvtier('trace', 'validate', b.file), b.message);
      const out = join(dir, `run-${b.name}`);
      expectOneError(kvtier('run', '--trace', b.file, '--policy', 'h2o', ...TINY, '--out', out), b.message);
      expect(fs.existsSync(out)).toBe(false);
      expectOneError(kvtier('trace', 'stats', b.file), b.message);
    });
  }

  it('hil run on a remainder of NaN: exit 1, the message, nothing written', () => {
    const b = BAD[0]!;
    const out = join(dir, 'hil-nan');
    expectOneError(kvtier('hil', 'run', '--trace', b.file, '--policy', 'h2o', ...TINY, '--backend', 'host', '--out', out), b.message);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a sweep over the bad copies fails each of them with its message and exits 1', () => {
    const spec = join(dir, 'sweep.json');
    fs.writeFileSync(spec, JSON.stringify({ traces: [good, ...BAD.map((b) => b.file)], policies: ['h2o'], budgets: ['50%'], hardware: [HW], models: [MODEL] }));
    const r = kvtier('sweep', spec, '--out', join(dir, 'sweep-out'), '--workers', '0');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^1 of 4 configurations ok/m);
    const failed = r.stdout.split('\n').filter((l) => l.startsWith('FAILED '));
    expect(failed).toHaveLength(3);
    for (const b of BAD) expect(failed.filter((l) => l.endsWith(`: ${b.message}`)), b.name).toHaveLength(1);
  });
});

describe('input errors name the path and the valid choices', () => {
  it('a directory or a missing file given as a trace', () => {
    const isDir = `${dir}: cannot read the attention trace: it is a directory (expected a .kvt attention trace file)`;
    expectOneError(kvtier('trace', 'stats', dir), isDir);
    expectOneError(kvtier('run', '--trace', dir, '--policy', 'h2o', ...TINY, '--out', join(dir, 'run-dir')), isDir);
    const missing = join(dir, 'missing.kvt');
    expectOneError(kvtier('trace', 'stats', missing), `${missing}: cannot read the attention trace: no such file (expected a .kvt attention trace file)`);
  });

  it('serve: an unknown bundled request trace lists the valid names; a directory or missing file is named', () => {
    const unknown = 'mooncake:nope: unknown bundled request trace "nope" (valid: mooncake:conversation, mooncake:synthetic; or the path of a Mooncake .jsonl, Azure or BurstGPT .csv file)';
    expectOneError(kvtier('serve', '--requests', 'mooncake:nope', '--model', 'llama-3-8b', '--hardware', 'h100-pcie5', '--out', join(dir, 'serve-1')), unknown);
    expectOneError(kvtier('serve', 'curve', '--requests', 'mooncake:conversation,mooncake:nope', '--out', join(dir, 'curve-1')), unknown);
    expect(fs.existsSync(join(dir, 'serve-1'))).toBe(false);
    expect(fs.existsSync(join(dir, 'curve-1'))).toBe(false);
    const expected = 'expected a Mooncake .jsonl, Azure or BurstGPT .csv file; bundled traces: mooncake:conversation, mooncake:synthetic';
    expectOneError(
      kvtier('serve', '--requests', dir, '--model', 'llama-3-8b', '--hardware', 'h100-pcie5', '--out', join(dir, 'serve-2')),
      `${dir}: cannot read the request trace: it is a directory (${expected})`,
    );
    const missing = join(dir, 'missing.jsonl');
    expectOneError(
      kvtier('serve', '--requests', missing, '--model', 'llama-3-8b', '--hardware', 'h100-pcie5', '--out', join(dir, 'serve-3')),
      `${missing}: cannot read the request trace: no such file (${expected})`,
    );
  });

  it('unknown policy, model, hardware and generator preset names list the valid ones', () => {
    const run = (...more: string[]) => kvtier('run', '--trace', good, '--out', join(dir, 'run-names'), ...more);
    const policy = run('--policy', 'nope', ...TINY);
    expect(policy.stderr).toMatch(/^kvtier: error: unknown policy "nope" \(valid: full, lru-offload, streaming-llm, h2o, oracle,[^\n]*\)\n$/);
    expect(policy.status).toBe(1);
    const model = run('--policy', 'h2o', '--model', 'nope', '--hardware', HW);
    expect(model.stderr).toMatch(/^kvtier: error: model "nope" is neither a preset nor a file \(no file at [^)]*nope\); presets: llama-2-7b, llama-3-8b,[^\n]*\n$/);
    expect(model.status).toBe(1);
    const hw = run('--policy', 'h2o', '--model', MODEL, '--hardware', 'nope');
    expect(hw.stderr).toMatch(/^kvtier: error: hardware "nope" is neither a preset nor a file \(no file at [^)]*nope\); presets: h100-pcie5,[^\n]*\n$/);
    expect(hw.status).toBe(1);
    expect(fs.existsSync(join(dir, 'run-names'))).toBe(false);
    expectOneError(
      kvtier('trace', 'generate', '--out', join(dir, 'gen.kvt'), '--preset', 'nope'),
      '--preset: unknown preset "nope" (valid: default, needle, broad, sharp, no-sinks, captured-brown, captured-brown-needle)',
    );
    const param = kvtier('trace', 'gen', '--out', join(dir, 'gen.kvt'), '--set', 'zipf_alfa=1.2');
    expect(param.stderr).toMatch(/^kvtier: error: invalid generator parameter 'zipf_alfa': expected a known parameter name \(one of model, layers, kv_groups, [^)]*zipf_alpha, [^)]*\), got "zipf_alfa"\n$/);
    expect(param.status).toBe(1);
    expect(fs.existsSync(join(dir, 'gen.kvt'))).toBe(false);
    const cache = kvtier('serve', '--requests', 'mooncake:synthetic', '--model', 'llama-3-8b', '--hardware', 'h100-pcie5', '--cache', 'nope', '--out', join(dir, 'serve-4'));
    expect(cache.stderr).toMatch(/^error: option '--cache <policy>' argument 'nope' is invalid\. unknown cache policy "nope" \(valid: lru, lfu, arc, s3fifo\)\n/);
    expect(cache.status).toBe(1);
  });

  it('a bad flag or value: exit 1 with the flag named, no stack trace', () => {
    const bogus = kvtier('run', '--trace', good, '--policy', 'h2o', '--bogus', '--out', join(dir, 'run-flag'));
    expect(bogus.stderr).toMatch(/^error: unknown option '--bogus'\n/);
    expect(bogus.status).toBe(1);
    expectOneError(kvtier('run', '--trace', good, '--policy', 'h2o', '--group-size', 'x', '--out', join(dir, 'run-flag')), '--group-size must be an integer >= 1 (got "x")');
    expectOneError(kvtier('run', '--trace', good, '--policy', 'h2o', '--copy-mode', 'nope', ...TINY, '--out', join(dir, 'run-flag')), '--copy-mode must be one of per-run, gather (got "nope")');
    expect(bogus.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(join(dir, 'run-flag'))).toBe(false);
  });
});

/** Run the CLI with `closed` ('stdout' or 'stderr') a pipe whose reading end is closed at once. */
function withClosedPipe(closed: 'stdout' | 'stderr', ...args: string[]): Promise<{ status: number | null; other: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['bin/kvtier.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child[closed].destroy();
    let other = '';
    const open = closed === 'stdout' ? child.stderr : child.stdout;
    open.setEncoding('utf8');
    open.on('data', (s: string) => void (other += s));
    child.on('error', fail);
    child.on('close', (status) => done({ status, other }));
  });
}

describe('kvtier hil pool-profiles', () => {
  it('writes the base with its host-link terms pooled, and refuses a missing file, another GPU and an existing --out, writing nothing', () => {
    const base = JSON.parse(fs.readFileSync(HW, 'utf8'));
    const other = join(dir, 'pool-other.json');
    fs.writeFileSync(other, JSON.stringify({ ...base, links: base.links.map((l: { b_to_a: object }) => ({ ...l, b_to_a: { ...l.b_to_a, alpha_us: 30 } })) }));
    const out = join(dir, 'pooled.json');
    const ok = kvtier('hil', 'pool-profiles', HW, '--from', other, '--out', out);
    expect(ok.status).toBe(0);
    expect(JSON.parse(fs.readFileSync(out, 'utf8')).links[0].b_to_a.alpha_us).toBe(30);
    expectOneError(kvtier('hil', 'pool-profiles', HW, '--from', other, '--out', out), `--out ${out} exists; give --force to replace it`);
    expect(kvtier('hil', 'pool-profiles', HW, '--from', other, '--out', out, '--force').status).toBe(0);
    const fresh = join(dir, 'pooled-2.json');
    const missing = join(dir, 'no-such.json');
    expectOneError(kvtier('hil', 'pool-profiles', HW, '--from', missing, '--out', fresh), `${missing}: not a readable JSON hardware profile (ENOENT: no such file or directory, open '${missing}')`);
    const h100 = join(dir, 'pool-h100.json');
    fs.writeFileSync(h100, JSON.stringify({ ...base, gpu: { ...base.gpu, name: 'other-gpu' } }));
    expectOneError(kvtier('hil', 'pool-profiles', HW, '--from', h100, '--out', fresh), `${h100}: GPU "other-gpu", not the "tiny-gpu" of ${HW} (pool profiles of one GPU)`);
    expect(fs.existsSync(fresh)).toBe(false);
  });
});

describe('output to a closed pipe', () => {
  for (const args of [['--help'], ['serve', '--help'], ['trace', 'generate', '--help']]) {
    it(`kvtier ${args.join(' ')} with stdout closed: exit 0, nothing on stderr`, async () => {
      expect(await withClosedPipe('stdout', ...args)).toEqual({ status: 0, other: '' });
    });
  }

  it('a command whose stdout is closed still finishes its work and exits with its own status', async () => {
    expect(await withClosedPipe('stdout', 'policies')).toEqual({ status: 0, other: '' });
    const out = join(dir, 'run-closed');
    expect(await withClosedPipe('stdout', 'run', '--trace', good, '--policy', 'h2o', ...TINY, '--hbm-budget', '50%', '--out', out)).toEqual({ status: 0, other: '' });
    expect(fs.existsSync(join(out, 'summary.json'))).toBe(true);
  });

  it('an error with stderr closed still exits 1 (and prints no stack trace on stdout)', async () => {
    expect(await withClosedPipe('stderr', 'trace', 'stats', BAD[0]!.file)).toEqual({ status: 1, other: '' });
  });
});
