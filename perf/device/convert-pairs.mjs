// On the GPU machine (plain node, compiled JS): the GPU's time per block conversion kernel when the kernels
// run as the calibration times them (one kind, back to back) against as the HIL executor issues a change
// of bits between two quantized widths (hil/executor/step-ops.ts convert: dequantize into one FP16 scratch
// block, quantize from it, block after block). Llama-3-8B block geometry; every trial queued behind a gate
// of GEMVs (hil/bench/gate.ts), so the host's launches are not timed; the GPU otherwise idle.
// Cases (KERNELS kernels each, distinct blocks):
//   quant4, dequant4        one kind back to back (the calibration's convert bench)
//   pairs 4->2, pairs 8->4  dequantize + quantize through the scratch block, as the executor converts
//   alternate 4/2           dequantize INT4 and quantize INT2 in turn, on separate buffers (no shared block)
// us per kernel = the memory stream's time from the first kernel to the last, over the kernels; the median
// over ROUNDS rounds (cases alternated).
//   node perf/device/convert-pairs.mjs DIST     (KVTIER_HIL_ADDON names the addon; ROUNDS, KERNELS)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/convert-pairs.mjs DIST');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { ComputeGate } = await load('hil/bench/gate.js');
const { blockBytes, kMetaOffset, PRECISION_OF_BITS, sectionElems } = await load('hil/kv-format.js');
const env = (k, d) => {
  const v = Number(process.env[k] ?? d);
  if (!(Number.isInteger(v) && v >= 2)) throw new Error(`${k} must be an integer >= 2 (got ${process.env[k]})`);
  return v;
};
const ROUNDS = env('ROUNDS', 7);
const KERNELS = env('KERNELS', 256);
const b = openBackend(process.env.BACKEND ?? 'cuda');
const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
const n = 2 * sectionElems(g);
const fp16 = blockBytes(g, 'fp16');
const stride = (bits) => Math.ceil(blockBytes(g, PRECISION_OF_BITS[bits]) / 256) * 256;
const meta = (bits) => kMetaOffset(g, PRECISION_OF_BITS[bits]);
const src = b.alloc('device', KERNELS * fp16);
const out = b.alloc('device', KERNELS * fp16);
const scratch = b.alloc('device', fp16);
const codes = Object.fromEntries([8, 4, 2].map((bits) => [bits, b.alloc('device', KERNELS * stride(bits))]));
const halfs = new Uint16Array(fp16 / 2).map((_, i) => 0x3800 + ((i * 37) % 1024));
for (let k = 0; k < KERNELS; k++) b.write(src, k * fp16, halfs);
const quant = (bits, from, fromOff, k) => b.quantize('memory', { src: from, srcOffset: fromOff, codes: codes[bits], codesOffset: k * stride(bits), meta: codes[bits], metaOffset: k * stride(bits) + meta(bits), n, bits, groupSize: g.groupSize });
const dequant = (bits, k, to, toOff) => b.dequantize('memory', { codes: codes[bits], codesOffset: k * stride(bits), meta: codes[bits], metaOffset: k * stride(bits) + meta(bits), dst: to, dstOffset: toOff, n, bits, groupSize: g.groupSize });
// codes at every width, for the dequantizing cases
for (const bits of [8, 4, 2]) for (let k = 0; k < KERNELS; k++) quant(bits, src, k * fp16, k);
await b.synchronize();
const half = KERNELS / 2;
const cases = {
  quant4: () => { for (let k = 0; k < KERNELS; k++) quant(4, src, k * fp16, k); },
  dequant4: () => { for (let k = 0; k < KERNELS; k++) dequant(4, k, out, k * fp16); },
  'pairs 4->2': () => { for (let k = 0; k < half; k++) { dequant(4, k, scratch, 0); quant(2, scratch, 0, k); } },
  'pairs 8->4': () => { for (let k = 0; k < half; k++) { dequant(8, k, scratch, 0); quant(4, scratch, 0, k); } },
  'alternate 4/2': () => { for (let k = 0; k < half; k++) { dequant(4, k, out, k * fp16); quant(2, src, (half + k) * fp16, half + k); } },
};
const gate = await ComputeGate.open(b);
const e0 = b.createEvent();
const e1 = b.createEvent();
const us = Object.fromEntries(Object.keys(cases).map((c) => [c, []]));
// trials whose gate did not last through their queuing (more launches than the launch queue holds can do that)
const unheld = Object.fromEntries(Object.keys(cases).map((c) => [c, 0]));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases)) {
    const t = await gate.trial(`convert ${name}`, () => {
      b.waitEvent('memory', gate.start);
      b.record('memory', e0);
      run();
      b.record('memory', e1);
    });
    if (round > 0) {
      us[name].push((b.elapsedMs(e0, e1) * 1000) / KERNELS);
      if (!t.held) unheld[name]++;
    }
  }
}
const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const result = Object.fromEntries(Object.entries(us).map(([k, xs]) => [k, { us_per_kernel: +med(xs).toFixed(3), min: +Math.min(...xs).toFixed(3), max: +Math.max(...xs).toFixed(3), gate_not_held: unheld[k] }]));
console.log(JSON.stringify({ kernels: KERNELS, rounds: ROUNDS, block_bytes: fp16, result }));
