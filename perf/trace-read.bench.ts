/**
 * Trace read speed: generate a Llama-3-8B-shaped trace (32 layers, block 16, prompt 32768 tokens,
 * 1000 decode steps, topk k = 128), then time "read the trace and sum its masses" with the
 * streaming reader (checksums on and off) against a plain sequential read of the file's bytes.
 *
 *   npx tsx perf/trace-read.bench.ts [--steps N] [--prompt TOKENS] [--keep PATH]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateTrace } from '../traces/generator.js';
import { openTrace } from '../traces/trace-reader.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const steps = arg('steps', 1000);
const prompt = arg('prompt', 32768);
const keepAt = process.argv.indexOf('--keep');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-bench-'));
const file = keepAt > 0 ? process.argv[keepAt + 1]! : path.join(dir, 'llama-3-8b-32k.kvt');

function time<T>(f: () => T): [T, number] {
  const t0 = performance.now();
  const r = f();
  return [r, (performance.now() - t0) / 1000];
}

function sumMasses(verifyChecksums: boolean): number {
  const reader = openTrace(file, { verifyChecksums });
  let sum = 0;
  for (const step of reader) {
    for (const a of step.layers) {
      const m = a.mass;
      for (let i = 0; i < m.length; i++) sum += m[i]!;
      sum += a.remainder;
    }
  }
  reader.close();
  return sum;
}

function rawRead(): number {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(4 << 20);
  let total = 0;
  for (let n = fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = fs.readSync(fd, buf, 0, buf.length, null)) total += n;
  fs.closeSync(fd);
  return total;
}

/** best and median of `runs` timings */
function timings(f: () => unknown, runs = 9): { best: number; median: number } {
  const t = Array.from({ length: runs }, () => time(f)[1]).sort((a, b) => a - b);
  return { best: t[0]!, median: t[Math.floor(runs / 2)]! };
}

const [gen, genSec] = time(() =>
  generateTrace(file, { prompt_tokens: prompt, steps, encoding: 'topk', topk: 128, seed: 1 }, { overwrite: true }),
);
const mb = gen.bytes / 1e6;
console.log(`generated ${file}: ${mb.toFixed(1)} MB, ${steps} steps x 32 layers, in ${genSec.toFixed(2)} s`);
const [sum] = time(() => sumMasses(true));
const expected = steps * 32;
if (Math.abs(sum - expected) > 1e-3 * expected) throw new Error(`sum of masses ${sum}, expected ${expected}`);
const raw = timings(rawRead);
const checked = timings(() => sumMasses(true));
const unchecked = timings(() => sumMasses(false));
const row = (name: string, t: { best: number; median: number }) =>
  console.log(
    `${name.padEnd(44)} median ${t.median.toFixed(3)} s ${(mb / t.median).toFixed(0).padStart(5)} MB/s` +
      `   best ${t.best.toFixed(3)} s ${(mb / t.best).toFixed(0).padStart(5)} MB/s   ${((t.median / steps) * 1e6).toFixed(1)} us/step`,
  );
row('raw fs.readSync of the file (4 MiB chunks)', raw);
row('read + sum masses, checksums verified', checked);
row('read + sum masses, checksums off', unchecked);
console.log(`(9 runs each, warm page cache; ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version})`);
if (keepAt < 0) fs.rmSync(dir, { recursive: true, force: true });
