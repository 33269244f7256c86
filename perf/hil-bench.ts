// HIL benchmarks and quality measurements on one backend; prints a summary and writes JSON.
//   node dist/perf/hil-bench.js [--backend cuda|host|auto] [--out DIR] [--quick] [--only a,b] [--attn KEY=VALUE ...]
// --attn: an attention option of the backend (kvtier hil options), repeatable.
// Sections: checks, copies, attention, overlap, prefetch, gemv, file, quality.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AttentionOptions } from '../hil/addon-types.js';
import { attnFlag } from '../hil/attention-options.js';
import { openBackend } from '../hil/backend.js';
import { benchAttention, mixedAtInt8Bits, type AttentionBenchCase } from '../hil/bench/attention-bench.js';
import { ComputeGate, GATE_ROWS } from '../hil/bench/gate.js';
import { benchBidirectional, benchCopies, benchDeviceCopy, benchSlabCopies, formatSlabTarget, slabTargets } from '../hil/bench/copy-bench.js';
import { benchFile } from '../hil/bench/file-bench.js';
import { benchGemv } from '../hil/bench/gemv-bench.js';
import { benchOverlap } from '../hil/bench/overlap-bench.js';
import { benchPrefetch } from '../hil/bench/prefetch-bench.js';
import { runAllKernelChecks } from '../hil/checks/kernel-checks.js';
import { type QualityOptions, measureQuality, sinkRecentPolicy, uniformPolicy } from '../hil/quality.js';
import { qualityTable, writeQualityTable } from '../hil/quality-table.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const quick = args.includes('--quick');
const SECTIONS = ['checks', 'copies', 'attention', 'overlap', 'prefetch', 'gemv', 'file', 'quality'];
const only = new Set(arg('only', SECTIONS.join(',')).split(','));
for (const name of only) {
  if (!SECTIONS.includes(name)) {
    console.error(`--only: unknown section "${name}"; choices: ${SECTIONS.join(', ')}`);
    process.exit(2);
  }
}
const outDir = arg('out', process.env.OUT ?? 'runs/hil-bench');
mkdirSync(outDir, { recursive: true });

let attn: AttentionOptions = {};
args.forEach((a, i) => {
  if (a === '--attn') attn = attnFlag(args[i + 1] ?? '', attn);
});
const b = openBackend(arg('backend', 'auto') as 'cuda' | 'host' | 'auto', 0, attn);
const info = b.info();
const attentionOptions = b.attentionOptions();
const results: Record<string, unknown> = { backend: b.kind, device: info, date: new Date().toISOString(), quick, attention_options: attentionOptions };
const save = () => writeFileSync(join(outDir, 'hil-results.json'), `${JSON.stringify(results, null, 2)}\n`);
const log = (s: string) => console.log(s);
const MiB = 1 << 20;
log(`# kvtier HIL bench — backend ${b.kind}, device ${info.name}, ${results.date}`);
log(`attention options: ${Object.entries(attentionOptions).map(([k, v]) => `${k}=${v}`).join(' ')}`);

async function section(name: string, fn: () => Promise<unknown>): Promise<void> {
  if (!only.has(name)) return;
  const t0 = Date.now();
  try {
    results[name] = await fn();
  } catch (e) {
    results[name] = { error: (e as Error).message };
    log(`!! ${name} failed: ${(e as Error).message}`);
  }
  log(`-- ${name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  save();
}

await section('checks', async () => {
  const r = await runAllKernelChecks(b);
  for (const c of r) log(`${c.ok ? 'PASS' : 'FAIL'} ${c.name}: ${c.detail}`);
  log(`checks: ${r.filter((c) => c.ok).length}/${r.length} passed`);
  return r;
});

let pinnedLargeGBps = 0;
let deviceCopyGBps = 0;
await section('copies', async () => {
  const sizes = quick ? [4096, 2 * MiB, 16 * MiB] : [4096, 65536, 512 * 1024, 2 * MiB, 8 * MiB, 16 * MiB, 64 * MiB, 256 * MiB];
  const rows = await benchCopies(b, { sizes, hostKinds: ['pinned', 'pageable'], bytesPerTrial: quick ? 32 * MiB : 256 * MiB });
  const d2d = await benchDeviceCopy(b, quick ? 64 * MiB : 1024 * MiB);
  const bidir2 = await benchBidirectional(b, 2 * MiB, 64);
  const bidir64 = await benchBidirectional(b, 64 * MiB, 4);
  for (const r of rows) log(`copy ${r.direction} ${r.hostKind} ${(r.bytes / 1024).toFixed(0)} KiB: ${r.usPerCopy.toFixed(1)} us, ${r.GBps.toFixed(2)} GB/s`);
  log(`copy d2d ${d2d.bytes / MiB} MiB: ${d2d.GBps.toFixed(0)} GB/s (read+write)`);
  log(`bidirectional 2 MiB: h2d ${bidir2.h2dGBps.toFixed(1)} + d2h ${bidir2.d2hGBps.toFixed(1)} = ${bidir2.totalGBps.toFixed(1)} GB/s; 64 MiB: ${bidir64.totalGBps.toFixed(1)} GB/s`);
  const slabs = await benchSlabCopies(b, { slabBytes: 2 * MiB, slabs: quick ? 8 : 64 });
  const targets = slabTargets(rows, slabs);
  pinnedLargeGBps = Math.max(...targets.map((t) => t.bestPinnedGBps));
  for (const r of slabs) log(`slabs ${r.direction} ${r.slabs} x ${r.slabBytes / MiB} MiB (${r.method}): ${r.us.toFixed(1)} us, ${r.GBps.toFixed(2)} GB/s`);
  for (const t of targets) log(formatSlabTarget(t));
  deviceCopyGBps = d2d.GBps;
  return { rows, d2d, bidirectional: [bidir2, bidir64], slabs, slabTargets: targets };
});

await section('attention', async () => {
  const llama = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128 };
  const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
  // mixed at the average bits of uniform INT8: FP16 sinks + recent blocks, INT4 elsewhere
  const { share, precisionOf: mixed } = mixedAtInt8Bits(g);
  const contexts = quick ? [4096] : [4096, 32768, 131072];
  const cases: AttentionBenchCase[] = [];
  for (const L of contexts) {
    for (const p of ['fp16', 'int8', 'int4', 'int2'] as const) cases.push({ label: p, contextTokens: L, ...llama, precisionOf: () => p });
    cases.push({ label: 'mixed fp16+int4 @int8 bits', contextTokens: L, ...llama, precisionOf: mixed });
  }
  const rows: Awaited<ReturnType<typeof benchAttention>>[] = [];
  // every trial behind a gate (hil/bench/gate.ts): the host's time to launch a trial's first call is
  // not timed (measured on the H100: ~2.7 us per call at 32k FP16, lab/notes/HIL-NOTES.md); a
  // smaller gate GEMV on the host backend, where the gate only has to outlast the host's queuing
  const gate = await ComputeGate.open(b, b.kind === 'cuda' ? GATE_ROWS : 1024);
  try {
    for (const c of cases) {
      const r = await benchAttention(b, { ...c, gate });
      rows.push(r);
      log(`attention L=${r.contextTokens} ${r.label}: ${r.us.toFixed(1)} us, ${(r.kvBytes / MiB).toFixed(1)} MiB, ${r.GBps.toFixed(0)} GB/s, ${r.tokensPerSec.toFixed(0)} steps/s, ${r.avgBits.toFixed(2)} bits, ${r.plan.kernel}${r.plan.headWarps ? ' head warps' : ''} x ${r.plan.splits} splits (gate held in ${r.gateHeld} of ${r.gateTrials} trials)`);
    }
  } finally {
    gate.free();
  }
  for (const L of contexts) {
    const at = (label: string) => rows.find((r) => r.contextTokens === L && r.label === label)!;
    const fp16 = at('fp16');
    if (deviceCopyGBps > 0) log(`TARGET L=${L} fp16 reads KV at ${fp16.GBps.toFixed(0)} GB/s = ${((100 * fp16.GBps) / deviceCopyGBps).toFixed(1)}% of device copy ${deviceCopyGBps.toFixed(0)} GB/s (target >= 80% at >= 32k)`);
    log(`TARGET L=${L} int4/fp16 tokens/s = ${(at('int4').tokensPerSec / fp16.tokensPerSec).toFixed(2)}x (target >= 3x)`);
    log(`TARGET L=${L} mixed vs int8 at ${at('mixed fp16+int4 @int8 bits').avgBits.toFixed(2)} vs ${at('int8').avgBits.toFixed(2)} bits: ${at('mixed fp16+int4 @int8 bits').us.toFixed(1)} us vs ${at('int8').us.toFixed(1)} us`);
  }
  return { rows, deviceCopyGBps, mixedFp16Share: share };
});

await section('overlap', async () => {
  const r = await benchOverlap(b, quick ? { contextTokens: 4096, attnRepeat: 4, slabBytes: 2 * MiB, slabs: 4 } : { contextTokens: 32768, attnRepeat: 20, slabBytes: 2 * MiB, slabs: 16 });
  log(`overlap: compute ${r.computeMs.toFixed(3)} ms, copy ${r.copyMs.toFixed(3)} ms (${r.copyBytes / MiB} MiB), both ${r.bothMs.toFixed(3)} ms, compute while copying ${r.computeWhileCopyingMs.toFixed(3)} ms, masking efficiency ${(100 * r.maskingEfficiency).toFixed(1)}% (gate held in ${r.gateHeld} of ${r.gateTrials} trials)`);
  return r;
});

await section('prefetch', async () => {
  // layer-wise prefetch: 2 MiB per layer, copied while the layer before computes, issued with it
  const opts = { contextTokens: quick ? 4096 : 32768, layers: quick ? 4 : 16, attnPerLayer: 1, slabBytes: 2 * MiB, slabsPerLayer: 1, paced: true };
  const r = await benchPrefetch(b, opts);
  log(
    `prefetch: ${r.layers} layers at ${opts.contextTokens} tokens, ${r.copyBytes / MiB} MiB: copies ${r.copyMs.toFixed(3)} ms, kernels ${r.computeMs.toFixed(3)} ms alone and ${r.computeUnderCopiesMs.toFixed(3)} ms under the copies, ` +
      `step ${r.latencyAloneMs.toFixed(3)} ms alone and ${r.latencyMs.toFixed(3)} ms with them; compute stream still ${(1000 * r.gapsAloneMs).toFixed(1)} us alone and ${(1000 * r.stallMs).toFixed(1)} us with copies (gate held in ${r.gateHeld} of ${r.gateTrials} trials)`,
  );
  log(
    `TARGET masking efficiency ${(100 * r.maskingEfficiency).toFixed(1)}% (1 - stall / copy time, the stall the copies cost: ${(1000 * r.transferStallMs).toFixed(1)} us; target >= 95% when the copies fit: ${r.copyMs.toFixed(3)} vs ${r.computeMs.toFixed(3)} ms). ` +
      `Every gap counted: ${(100 * r.maskingEveryGap).toFixed(1)}%. Kernels slowed by ${(100 * r.slowdownShare).toFixed(1)}% of the copy time; counting that as stall too: ${(100 * r.maskingCountingSlowdown).toFixed(1)}%`,
  );
  return { ...r, options: opts };
});

await section('gemv', async () => {
  const shapes: [string, number, number][] = quick
    ? [['q_proj 4096x4096', 4096, 4096]]
    : [['q_proj 4096x4096', 4096, 4096], ['k/v_proj 1024x4096', 1024, 4096], ['gate/up 14336x4096', 14336, 4096], ['down 4096x14336', 4096, 14336]];
  const rows: Awaited<ReturnType<typeof benchGemv>>[] = [];
  for (const [label, r, c] of shapes) {
    const row = await benchGemv(b, label, r, c);
    rows.push(row);
    log(`gemv ${label}: ${row.us.toFixed(1)} us, ${row.GBps.toFixed(0)} GB/s`);
  }
  return rows;
});

await section('file', async () => {
  const paths = (process.env.KVTIER_HIL_FILE_DIRS ?? '/tmp').split(':');
  const rows: Awaited<ReturnType<typeof benchFile>> = [];
  for (const dir of paths) {
    for (const r of await benchFile(b, { path: join(dir, `kvtier-hil-${process.pid}.bin`), totalBytes: quick ? 16 * MiB : 256 * MiB, requestSizes: quick ? [65536, MiB] : [65536, 1 * MiB, 8 * MiB], threads: 4 })) {
      rows.push(r);
      log(`file ${r.path} ${r.direct ? 'O_DIRECT' : 'buffered'} request ${(r.requestBytes / 1024).toFixed(0)} KiB: write ${r.writeGBps.toFixed(2)} GB/s, read ${r.readGBps.toFixed(2)} GB/s`);
    }
  }
  return rows;
});

await section('quality', async () => {
  const settings = [8, 4, 3, 2].flatMap((bits) => [32, 64, 128].flatMap((groupSize) => [false, true].map((rotation) => ({ bits: bits as 2 | 3 | 4 | 8, groupSize, rotation }))));
  const base = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, seed: 42, recentTokens: 128, policyGroupSize: 128 };
  const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
  const { share } = mixedAtInt8Bits(g);
  const policies = [uniformPolicy('int8'), uniformPolicy('int4'), sinkRecentPolicy('mixed fp16 sinks+recent / int4 @int8 bits', 'int4', share)];
  const L = quick ? 256 : 2048;
  const audit: QualityOptions = { ...base, contextTokens: L, outlierChannels: 0, outlierScale: 1, concentrated: false, settings, policies };
  const realistic: QualityOptions = { ...audit, outlierChannels: 4, outlierScale: 8, concentrated: true };
  const out: Record<string, unknown> = {};
  for (const [name, o] of [['audit', audit], ['realistic', realistic]] as const) {
    const r = await measureQuality(b, o);
    const table = qualityTable(r, o, b.kind, info.name);
    writeQualityTable(join(outDir, `quality-${name}.json`), table);
    out[name] = table;
    for (const row of r.rows) log(`quality ${name} int${row.bits} G=${row.groupSize}${row.rotation ? ' +WHT' : ''}: output RMSE ${row.outputRmse.toExponential(2)}, rel ${row.outputRelL2.toExponential(2)}, KV RMSE ${row.kvRmse.toFixed(4)}`);
    for (const p of r.policies) log(`quality ${name} policy ${p.label} (${p.avgBits.toFixed(2)} bits): output RMSE ${p.outputRmse.toExponential(2)}, rel ${p.outputRelL2.toExponential(2)}`);
    const int4 = r.rows.find((x) => x.bits === 4 && x.groupSize === 128 && !x.rotation)!;
    if (name === 'audit') log(`TARGET INT4 G=128 attention-output RMSE vs FP16 on unit-scale data = ${int4.outputRmse.toFixed(5)} (target < 0.012); KV element RMSE ${int4.kvRmse.toFixed(4)}`);
  }
  return out;
});

save();
b.close();
log(`results in ${join(outDir, 'hil-results.json')}`);
