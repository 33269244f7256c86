#!/usr/bin/env node
// Runs on the GPU machine (no npm there), from compiled JS: the 2 MiB slab copies issued three
// ways (target: >= 95% of the best pinned bandwidth), then the PCIe copy calibration in
// the executor's layout next to the isolated and scattered in-situ fits.
//   node perf/hil-copy-check.mjs --dist DIR --out DIR [--backend cuda|host] [--model llama-3-8b] [--quick]
// The addon is found through KVTIER_HIL_ADDON or hil/build/Release; mathjs must resolve from DIST
// (a node_modules beside it, as in .device/hil6). Writes OUT/copy-check.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deviceArgs } from './device-args.mjs';

const { args, opt, dist, out, load } = deviceArgs('runs/hil-copy-check');
const quick = args.includes('--quick');

const { openBackend, cudaStatus } = await load('hil/backend.js');
const { benchCopies, benchSlabCopies, formatSlabTarget, slabTargets } = await load('hil/bench/copy-bench.js');
const { measureCopiesInSitu, measureLayoutCopies } = await load('hil/calibrate/measure.js');
const { fitLayout } = await load('hil/calibrate/calibrate.js');
const { fitAlphaBeta } = await load('hil/calibrate/fit-linear.js');
const { loadModel } = await load('sim/models/load-model.js');

const kind = opt('backend', 'cuda');
const status = cudaStatus();
if (kind === 'cuda' && !status.available) {
  console.error(`cuda backend unavailable: ${status.reason} (--backend host runs the same code on the CPU)`);
  process.exit(1);
}
mkdirSync(out, { recursive: true });
const MiB = 1 << 20;
const t0 = performance.now();
const b = openBackend(kind);
const info = b.info();
const model = loadModel(opt('model', 'llama-3-8b'));
const result = { backend: b.kind, device: info, date: new Date().toISOString(), quick, model: model.name };
const save = () => writeFileSync(join(out, 'copy-check.json'), `${JSON.stringify(result, null, 2)}\n`);
const secs = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
console.log(`# kvtier HIL copy check — ${b.kind} backend, ${info.name}, runtime ${info.runtimeVersion}, driver ${info.driverVersion}, ${result.date}`);

try {
  // 1. best pinned bandwidth, then 2 MiB slabs three ways
  const big = await benchCopies(b, { sizes: quick ? [2 * MiB, 16 * MiB] : [2 * MiB, 16 * MiB, 64 * MiB, 256 * MiB], hostKinds: ['pinned'], trials: 7, bytesPerTrial: quick ? 32 * MiB : 256 * MiB });
  for (const r of big) console.log(`pinned ${r.direction} ${r.bytes / MiB} MiB: ${r.usPerCopy.toFixed(1)} us, ${r.GBps.toFixed(2)} GB/s`);
  const slabs = await benchSlabCopies(b, { slabBytes: 2 * MiB, slabs: quick ? 8 : 64 });
  const targets = slabTargets(big, slabs);
  for (const r of slabs) console.log(`slabs ${r.direction} ${r.slabs} x 2 MiB (${r.method}): ${r.us.toFixed(1)} us, ${r.GBps.toFixed(2)} GB/s`);
  for (const t of targets) console.log(formatSlabTarget(t));
  Object.assign(result, { pinned: big, slabs, slabTargets: targets });
  save();
  console.log(`-- slabs done (${secs()})`);

  // 2. PCIe copy fits: isolated, scattered in situ (cuda only), executor layout
  const sizes = (quick ? [64, 256, 1024, 4096] : [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536]).map((k) => k * 1024);
  const iso = await benchCopies(b, { sizes, hostKinds: ['pinned'], trials: quick ? 3 : 7, bytesPerTrial: quick ? 8 * MiB : 256 * MiB });
  const pts = (d) => iso.filter((r) => r.direction === d).map((r) => ({ bytes: r.bytes, us: r.usPerCopy, label: `${r.bytes} B` }));
  const rows = Math.max(8, Math.round(model.weight_bytes_per_layer / 2 / model.hidden));
  const situ = b.kind === 'cuda' ? await measureCopiesInSitu(b, rows, model.hidden, quick ? 2 : 5) : null;
  console.log(`-- isolated${situ ? ' and scattered in-situ' : ''} copies done (${secs()})`);
  const layout = await measureLayoutCopies(b, { model, blockTokens: 16, groupSize: Math.min(128, model.head_dim), quick });
  const fits = {
    h2d: fitAlphaBeta(pts('h2d'), true),
    d2h: fitAlphaBeta(pts('d2h'), true),
    ...(situ ? { h2d_in_situ: fitAlphaBeta(situ.h2d, true), d2h_in_situ: fitAlphaBeta(situ.d2h, true) } : {}),
    h2d_layout: fitLayout(layout.h2d),
    d2h_layout: fitLayout(layout.d2h),
  };
  Object.assign(result, { fits, layout_points: [...layout.h2d, ...layout.d2h], layout_info: layout.info, in_situ_points: situ });
  save();
  const li = layout.info;
  console.log(`layout: ${li.block_bytes}-byte blocks, ${li.max_blocks} blocks per layer, compute layer (attention ${li.context_tokens} tokens + GEMV) ${li.layer_us.toFixed(1)} us, ${li.verified_copies} copies verified byte for byte`);
  for (const p of [...layout.h2d, ...layout.d2h]) {
    const lens = Object.entries(p.lengths).map(([k, v]) => `${v}x${k}`).join(' ');
    const warn = p.enqueue_us > p.gate_us ? '  WARNING: enqueue outlasted the gate (host-bound)' : p.compute_cover < 1 ? '  WARNING: compute ended before the copies' : '';
    console.log(`layout ${p.direction} ${p.label.padEnd(18)} ${String(p.runs).padStart(4)} copies ${(p.bytes / MiB).toFixed(2).padStart(7)} MiB ${p.us.toFixed(1).padStart(8)} us  ${(p.us / p.runs).toFixed(2).padStart(6)} us/copy  ${(p.bytes / p.us / 1e3).toFixed(2).padStart(6)} GB/s  [${lens}]  enqueue ${p.enqueue_us.toFixed(0)} us / gate ${p.gate_us.toFixed(0)} us, compute cover ${p.compute_cover.toFixed(2)}${warn}`);
  }
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  for (const [name, f] of Object.entries(fits)) {
    console.log(`FIT ${name.padEnd(12)} alpha ${f.alpha_us.toFixed(2).padStart(6)} us  beta ${f.GBps.toFixed(2).padStart(6)} GB/s  rms ${pct(f.rms_residual).padStart(6)}  max ${pct(f.max_abs_residual).padStart(6)}${f.degenerate ? `  DEGENERATE: ${f.degenerate}` : ''}`);
  }
  console.log(`-- layout done (${secs()})`);
} finally {
  save();
  b.close();
}
console.log(`results in ${join(out, 'copy-check.json')} (${secs()})`);
