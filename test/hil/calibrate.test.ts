// `hil calibrate` on the host backend (quick): the profile validates, `kvtier run` accepts it,
// every number has a measured source, and the fitted alpha/beta reproduce the measurements they
// were fitted to (residuals recomputed from the profile's own fields).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attentionCurveFromChains, calibrate, formatFits, kernelSlowdown, writeCalibration } from '../../hil/calibrate/calibrate.js';
import { fitAlphaBeta, predictUs } from '../../hil/calibrate/fit-linear.js';
import { defaultCalibrationPoints, measurementCount, PACE_READINGS } from '../../hil/calibrate/measure.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { simulate } from '../../sim/run.js';
import { loadModel } from '../../sim/models/load-model.js';
import { linearTimeUs } from '../../sim/roofline.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');
const dir = mkdtempSync(join(tmpdir(), 'kvtier-cal-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('least-squares fit', () => {
  it('recovers alpha and beta from exact points, in both weightings', () => {
    const pts = [4096, 65536, 1 << 20, 16 << 20].map((bytes) => ({ bytes, us: predictUs(5, 50, bytes) }));
    for (const rel of [true, false]) {
      const f = fitAlphaBeta(pts, rel);
      expect(f.alpha_us).toBeCloseTo(5, 6);
      expect(f.GBps).toBeCloseTo(50, 6);
      expect(f.max_abs_residual).toBeLessThan(1e-9);
    }
  });
});

describe('attention curve from layer chains', () => {
  it('makes attention + the fitted GEMV line equal the measured chain, not chain minus the GEMV measured alone', () => {
    // GEMV times with a real bend (a fixed cost that grows with size), so the fitted line misses the layer shape
    const gemvUs = (bytes: number) => 3 + bytes / 3.0e3 + 2e-12 * bytes * bytes ** 0.5;
    const shapes = [33554432, 117440512, 436207616, 1050673152];
    const line = fitAlphaBeta(shapes.map((bytes) => ({ bytes, us: gemvUs(bytes) })), false);
    const model = { weight_bytes_per_layer: 436207616, flops_per_token_per_layer: 2 * 218103808 };
    const gpu = { name: 'x', hbm_bandwidth_GBps: 3000, fp16_TFLOPs: 800, kernel_launch_us: 5, reserved_GiB: 1, linear_launch_us: Math.round(line.alpha_us * 100) / 100, linear_GBps: Math.round(line.GBps * 100) / 100 };
    const isolated = gemvUs(model.weight_bytes_per_layer);
    const lineAtLayer = linearTimeUs(gpu, model.weight_bytes_per_layer, model.flops_per_token_per_layer);
    expect(Math.abs(lineAtLayer - isolated)).toBeGreaterThan(1); // the line's residual at the layer shape
    const chains = [1024, 8192, 32768].map((tokens) => ({ tokens, bytes: tokens * 4096, chain_us_per_layer: isolated + 10 + tokens / 500 }));
    const { curve, layerLinearUs } = attentionCurveFromChains(chains, gpu, model);
    expect(layerLinearUs).toBe(lineAtLayer);
    for (const [i, c] of chains.entries()) {
      expect(curve[i]!.us + lineAtLayer).toBeCloseTo(c.chain_us_per_layer, 9);
      expect(Math.abs(curve[i]!.us - (c.chain_us_per_layer - isolated))).toBeGreaterThan(1);
    }
    // a chain faster than the line's GEMV keeps a positive curve
    expect(attentionCurveFromChains([{ tokens: 1, bytes: 1, chain_us_per_layer: lineAtLayer - 5 }], gpu, model).curve[0]!.us).toBe(0.01);
  });
});

describe.skipIf(!host.available)(`hil calibrate, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('writes a valid, sourced profile whose fits reproduce its own measurements', async () => {
    const fx = makeHilFixture(256, 4);
    const progress: [number, number][] = [];
    const r = await calibrate({ backend: 'host', base: 'h100-pcie5', model: fx.model, groupSize: 64, quick: true, fileDir: dir, date: '2026-11-22', onProgress: (d, n) => progress.push([d, n]) });
    // progress: 0 of the count first, then one more after each measurement, ending at the count
    const total = measurementCount({ model: loadModel(fx.model), quick: true }, defaultCalibrationPoints(true), false);
    expect(progress).toEqual(Array.from({ length: total + 1 }, (_, i) => [i, total]));
    const out = join(dir, 'profile.json');
    writeCalibration(out, r);
    const p = validateProfile(JSON.parse(readFileSync(out, 'utf8')), out);
    const side = JSON.parse(readFileSync(join(dir, 'profile.fit.json'), 'utf8'));
    expect(p.sources['gpu.hbm_bandwidth_GBps']).toMatch(/^measured by kvtier hil calibrate on host CPU 2026-11-22/);
    // the host backend runs everything on the host: no host clock, and none of what acts on it
    for (const k of ['issue_copy_us', 'issue_convert_us', 'launch_queue_ops', 'host_convert_us'] as const) expect(p.gpu[k], k).toBeUndefined();
    // ... though the host conversions were timed (for the record)
    expect(side.measurements.host_convert.map((x: { from_bits: number; to_bits: number }) => [x.from_bits, x.to_bits])).toEqual([
      [8, 4],
      [8, 2],
      [4, 2],
    ]);
    const pcie = p.links.find((l) => l.a === 'hbm' || l.b === 'hbm')!;
    expect(p.sources['links[0].b_to_a.alpha_us']).toMatch(/pinned copies in the HIL executor's layout .*nothing else on the GPU\): time = H2D copies x alpha_h2d \+ H2D bytes \/ beta_h2d \+ the same for D2H \+ groups x per_group \+ direction changes x per_change over [0-9]+ batches.*its H2D alpha.*; for comparison, isolated pinned copies: .*scattered in situ: alpha/);
    expect(p.sources['links[0].b_to_a.alpha_under_compute_us']).toMatch(/pinned copies in the HIL executor's layout .*the layer GEMV back to back on the compute stream throughout\).*\(per_group held at the idle fit's\).*its H2D alpha( \(-?[0-9.]+: clamped to 0\))?; for comparison, the same batches beside attention \+ GEMV layers: alpha /);
    expect(p.sources['links[0].a_to_b.alpha_us']).toMatch(/D2H blocks from HBM slab slots .*its D2H alpha/);
    expect(p.description).toMatch(/Fit residuals.*H2D layout/);
    // the pcie link is the executor-layout fit (not the isolated or scattered one): idle GPU for
    // alpha_us and GBps, kernels running for alpha_under_compute_us ...
    const r2 = (x: number) => Math.round(x * 100) / 100;
    // the direction-change medians stay in the fits for comparison ...
    const sw = r.fits.direction_switch!;
    // (from the batches whose groups alternate; the one ordered by direction, of 8 blocks a group, is left out)
    const alternating = (xs: readonly { switches: number }[]) => xs.filter((x) => x.switches === 15);
    expect(r.measurements.mixed_layout_idle!.length).toBe(5);
    expect(sw.batches.map((x) => x.condition)).toEqual([...alternating(r.measurements.mixed_layout!).map(() => 'under compute'), ...alternating(r.measurements.mixed_layout_idle!).map(() => 'idle')]);
    expect(sw.batches.length).toBe(8); // groups of 2, 4, 8 and 16 blocks fit the quick pool of 64 blocks
    // ... the link, the switch costs and gpu.copy_batch_us are the per-batch fit's (fit-copy-batches.ts),
    // rounded to 0.01 and clamped to 0
    const cb = r.fits.copy_batches!;
    const c0 = (x: number) => r2(Math.max(0, x));
    expect([...cb.idle.points, ...(cb.idle.dropped ?? [])].map((x) => x.groups).sort((x, y) => x - y)).toEqual([...r.measurements.h2d_layout_idle.filter((x) => !x.label.startsWith('adjacent ')).map(() => 8), ...r.measurements.d2h_layout_idle.map(() => 8), ...r.measurements.mixed_layout_idle!.map(() => 16)]);
    // every batch but the one from adjacent host slots, which prices the adjacent copies instead
    expect(r.measurements.h2d_layout_idle.filter((x) => x.label.startsWith('adjacent ')).map((x) => x.label)).toEqual([`adjacent single ${r.measurements.layout_info.small_bytes![0]}-byte blocks`]);
    expect(cb.adjacent!.bytes).toBe(r.measurements.layout_info.small_bytes![0]);
    // (the idle saving per adjacent copy, clamped to [0, the H2D alpha]: on a 2-core host either bound can hold)
    const adjacentUs = Math.round(Math.min(Math.max(0, cb.adjacent!.idle_us), p.links[0].b_to_a!.alpha_us) * 1000) / 1000;
    expect(p.links[0].b_to_a!.adjacent_us).toBe(adjacentUs);
    expect(p.sources['links[0].b_to_a.adjacent_us']).toContain('from adjacent host slots against');
    if (cb.adjacent!.idle_us > p.links[0].b_to_a!.alpha_us) expect(p.sources['links[0].b_to_a.adjacent_us']).toContain(`(held at the alpha, ${p.links[0].b_to_a!.alpha_us} us)`);
    if (cb.adjacent!.idle_us < 0) expect(p.sources['links[0].b_to_a.adjacent_us']).toContain('(negative: clamped to 0)');
    expect(p.links[0].a_to_b!.adjacent_us).toBeUndefined();
    const switches = { switch_us: c0(cb.idle.switch_us!), switch_under_compute_us: c0(cb.under_compute.switch_us!) };
    // the under-compute beta where it came out positive
    const busyBeta = (GBps: number) => (r2(GBps) > 0 ? { GBps_under_compute: r2(GBps) } : {});
    expect(pcie.b_to_a).toEqual({ alpha_us: c0(cb.idle.h2d.alpha_us), GBps: r2(cb.idle.h2d.GBps), alpha_under_compute_us: c0(cb.under_compute.h2d.alpha_us), ...busyBeta(cb.under_compute.h2d.GBps), ...switches, adjacent_us: adjacentUs });
    expect(pcie.a_to_b).toEqual({ alpha_us: c0(cb.idle.d2h.alpha_us), GBps: r2(cb.idle.d2h.GBps), alpha_under_compute_us: c0(cb.under_compute.d2h.alpha_us), ...busyBeta(cb.under_compute.d2h.GBps), ...switches });
    expect(p.gpu.copy_batch_us).toBe(c0(cb.idle.group_us));
    expect(p.gpu.copy_under_compute).toBe('gemv');
    expect(cb.under_compute.group_us).toBe(cb.idle.group_us);
    // the under-compute terms are fitted to the batches beside the GEMV alone; those beside attention +
    // GEMV layers are fitted apart, for comparison
    const ms = r.measurements;
    // (every batch either fitted or left out as far off the fit of the others, at most a quarter of them: a 2-core host's timings can be)
    // (the batch from adjacent host slots is not fitted: checked above)
    const usOf = (xs: { us: number; label?: string }[]) => xs.filter((x) => !x.label?.startsWith('adjacent ')).map((x) => x.us).sort((a, b) => a - b);
    const batchesOf = (f: { points: { us: number }[]; dropped?: { us: number }[] }) => {
      expect(f.dropped?.length ?? 0).toBeLessThanOrEqual(Math.floor((f.points.length + (f.dropped?.length ?? 0)) / 4));
      return usOf([...f.points, ...(f.dropped ?? [])]);
    };
    expect(batchesOf(cb.under_compute)).toEqual(usOf([...ms.h2d_layout_gemv!, ...ms.d2h_layout_gemv!, ...ms.mixed_layout_gemv!]));
    expect(batchesOf(cb.beside_layers!)).toEqual(usOf([...ms.h2d_layout, ...ms.d2h_layout, ...ms.mixed_layout!]));
    expect(ms.h2d_layout_gemv!.map((x) => x.runs)).toEqual(ms.h2d_layout.map((x) => x.runs));
    // one block's (de)quantization kernel: every width both ways, idle and under compute; the idle median
    const conv = r.measurements.convert_kernels!;
    expect(conv.map((x) => `${x.op} ${x.bits} ${x.condition}`).sort()).toEqual(['quantize', 'dequantize'].flatMap((op) => [8, 4, 3, 2].flatMap((bits) => [`${op} ${bits} idle`, `${op} ${bits} under compute`])).sort());
    const idleUs = conv.filter((x) => x.condition === 'idle').map((x) => x.us).sort((a, b) => a - b);
    expect(p.gpu.convert_kernel_us).toBe(r2((idleUs[3] + idleUs[4]) / 2));
    expect(p.sources['gpu.convert_kernel_us']).toMatch(/quantize \/ dequantize kernel \(FP16 <-> INT8\/4\/3\/2\) on the memory stream, 4 back to back, GPU otherwise idle.*the median/);
    expect(p.sources['links[0].b_to_a.switch_us']).toMatch(/the per-change term of the idle per-batch copy fit/);
    expect(p.sources['links[0].a_to_b.switch_under_compute_us']).toMatch(/the per-change term of the under compute per-batch copy fit/);
    expect(p.sources['gpu.copy_batch_us']).toMatch(/the per-group term of the idle per-batch copy fit .*charged once per memory-stream copy batch/);
    expect(r.measurements.h2d_layout_idle.map((x) => x.runs)).toEqual(r.measurements.h2d_layout.map((x) => x.runs));
    expect(r.measurements.h2d_layout_idle.every((x) => x.compute_cover === 0 && x.compute_extra_us === 0)).toBe(true);
    // the host's attention is no split kernel: no tail wave priced, and the calibration says why
    expect(p.gpu.attention_waves).toBeUndefined();
    expect(p.sources['gpu.attention_waves']).toBeUndefined();
    // (the host backend reports no SM count; the plans are recorded at every chain context)
    expect(r.measurements.multiprocessors).toBe(0);
    expect(r.measurements.attention_in_situ.every((x) => x.plans?.length === 1 + (x.phases?.length ?? 0))).toBe(true);
    expect(r.fits.tail_wave).toEqual({ reason: 'no SM count' });
    // the kernel slowdown under copies is a cuda measurement: the host profile leaves it out
    expect(p.gpu.kernel_slowdown_under_h2d).toBeUndefined();
    expect(p.gpu.kernel_slowdown_under_d2h).toBeUndefined();
    expect(r.measurements.layout_info.verified_copies).toBeGreaterThan(0);
    // ... and its numbers (rounded to 0.01) predict every idle batch as the fit's terms (negative ones at 0)
    // do: copies x alpha + bytes / beta per direction + groups x copy_batch_us + changes x switch_us
    const i = cb.idle;
    for (const pt of i.points) {
      const fromProfile = pt.h2d.runs * pcie.b_to_a!.alpha_us + predictUs(0, pcie.b_to_a!.GBps, pt.h2d.bytes) + pt.d2h.runs * pcie.a_to_b!.alpha_us + predictUs(0, pcie.a_to_b!.GBps, pt.d2h.bytes) + pt.groups * p.gpu.copy_batch_us! + pt.switches * pcie.b_to_a!.switch_us!;
      const fromFit = pt.h2d.runs * Math.max(0, i.h2d.alpha_us) + pt.h2d.bytes * i.h2d.us_per_byte + pt.d2h.runs * Math.max(0, i.d2h.alpha_us) + pt.d2h.bytes * i.d2h.us_per_byte + pt.groups * Math.max(0, i.group_us) + pt.switches * Math.max(0, i.switch_us!);
      // rounding: 0.005 us per copy, group and change, and the bytes at the rounded beta
      const bound = 0.005 * (pt.h2d.runs + pt.d2h.runs + pt.groups + pt.switches) + Math.abs(predictUs(0, pcie.b_to_a!.GBps, pt.h2d.bytes) - pt.h2d.bytes * i.h2d.us_per_byte) + Math.abs(predictUs(0, pcie.a_to_b!.GBps, pt.d2h.bytes) - pt.d2h.bytes * i.d2h.us_per_byte);
      expect(Math.abs(fromProfile - fromFit)).toBeLessThanOrEqual(bound + 1e-9);
      if (![i.h2d.alpha_us, i.d2h.alpha_us, i.group_us, i.switch_us!].some((x) => x < 0)) expect(fromFit).toBeCloseTo(pt.fit_us, 9);
    }
    expect(side.fits.copy_batches.idle.points.length + (side.fits.copy_batches.idle.dropped?.length ?? 0)).toBe(23 + 6); // and single blocks at 3 quantized sizes, both ways
    // the sizes timed, from the model's INT8 / INT4 / INT2 blocks, and the link's source names them
    const small = r.measurements.layout_info.small_bytes!;
    expect(small.length).toBe(3);
    expect([...small].sort((a, b) => b - a)).toEqual(small);
    expect(small.every((q) => q < r.measurements.layout_info.block_bytes)).toBe(true);
    expect(p.sources['links[0].a_to_b.alpha_us']).toContain(`single quantized blocks of ${small.join(', ')} bytes each way`);
    // the nvme read direction is the executor-pattern batch fit (readBatch, the executor's I/O threads)
    const nvLink = p.links.findIndex((l) => l.a === 'nvme' || l.b === 'nvme');
    const rdKey = p.links[nvLink].b === 'nvme' ? 'b_to_a' : 'a_to_b';
    const rb = r.fits.file_read_batch!;
    const curve = r.fits.file_read_request_us!;
    expect(p.links[nvLink][rdKey]).toEqual({ alpha_us: r2(rb.alpha_us), GBps: r2(rb.GBps), request_us: curve, ...(rb.batch_us > 0 ? { batch_us: r2(rb.batch_us) } : {}) });
    // the requests below a slot timed by size: the read direction's request_us
    expect(p.sources[`links[${nvLink}].${rdKey}.request_us`]).toMatch(/per request size below a block's slot .*4 KiB-aligned.*median time per request/);
    // requests smaller than a slot: the model's INT8, INT4 and INT2 blocks, rounded up to 4 KiB, one batch
    // per size and layer; each size's time the median of its batches' time per request, then the slot at
    // the line (the batches the line was fitted to leave the sized ones out)
    const slotBytes = Math.ceil(r.measurements.file_batch_info!.block_bytes / 4096) * 4096;
    const m = loadModel(fx.model);
    const { quantizedBlockBytes } = await import('../../hil/calibrate/measure.js');
    const sizes = [...new Set(quantizedBlockBytes({ kvHeads: m.kv_heads, blockTokens: 16, headDim: m.head_dim, groupSize: 64 }).map((b) => Math.ceil(b / 4096) * 4096))].filter((b) => b < slotBytes).sort((a, b) => a - b);
    expect(sizes.length).toBeGreaterThan(0);
    const sized = r.measurements.file_read_batch.filter((x) => x.kind === 'sized');
    expect(sized.map((x) => [x.request_bytes, x.layer])).toEqual(sizes.flatMap((b) => [0, 1, 2, 3].map((l) => [b, l])));
    expect(curve.map((x) => x[0])).toEqual([...sizes, slotBytes]);
    const med = (xs: number[]) => (xs.sort((a, b) => a - b), xs.length % 2 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2);
    for (const [i, b] of sizes.entries()) expect(curve[i][1]).toBe(r2(med(sized.filter((x) => x.request_bytes === b).map((x) => (x.us - rb.batch_us) / x.requests))));
    expect(curve.at(-1)![1]).toBe(r2(rb.alpha_us + slotBytes / (rb.GBps * 1e3)));
    expect(rb.points).toHaveLength(r.measurements.file_read_batch.length - sized.length);
    expect(p.sources[`links[${nvLink}].${rdKey}.alpha_us`]).toMatch(/32 I\/O threads\) in the HIL executor's pattern.*readBatch.*requests x alpha \+ bytes \/ beta per batch/);
    expect(r.measurements.file_batch_info).toMatchObject({ threads: 32, layers: 4 });
    expect(r.measurements.file_read_batch.some((x) => x.kind === 'small')).toBe(true);
    expect(new Set(r.measurements.file_read_batch.filter((x) => x.kind === 'layer').map((x) => x.run_blocks)).size).toBeGreaterThan(2);
    const { layerRuns, RUN_BLOCKS } = await import('../../hil/calibrate/file-batches.js');
    // four rounds of the 4 layers: every run length of RUN_BLOCKS is some layer's turn (one round left out runs of 24 blocks and the whole run)
    const layerPts = r.measurements.file_read_batch.filter((x) => x.kind === 'layer');
    expect(layerPts.map((x) => [x.round, x.layer])).toEqual([0, 1, 2, 3].flatMap((k) => [0, 1, 2, 3].map((l) => [k, l])));
    expect(new Set(layerPts.map((x) => (x.layer + x.round) % RUN_BLOCKS.length)).size).toBe(RUN_BLOCKS.length);
    // writes in the executor's pattern: one batch per layer in each of three rounds, of the same runs as
    // the reads' (every run length once at least), the write direction's fit; the one-request fit named
    // beside it in the source
    const wb = r.measurements.file_write_batch!;
    const M = r.measurements.file_batch_info!.blocks_per_layer;
    const slot = Math.ceil(r.measurements.file_batch_info!.block_bytes / 4096) * 4096;
    expect(wb.map((x) => [x.layer, x.round, x.kind])).toEqual([0, 1, 2].flatMap((k) => [0, 1, 2, 3].map((l) => [l, k, 'layer'])));
    expect(new Set(wb.map((x) => (x.layer + x.round) % RUN_BLOCKS.length)).size).toBe(RUN_BLOCKS.length);
    for (const x of wb) {
      const runs = layerRuns(M, RUN_BLOCKS[(x.layer + x.round) % RUN_BLOCKS.length], 0);
      expect(x.run_blocks).toBe(runs[0][1]);
      expect(x.bytes).toBe(x.requests * x.run_blocks * slot);
      expect(x.us).toBeGreaterThan(0);
    }
    expect(r.fits.file_write_batch!.points).toHaveLength(12);
    const wrKey = rdKey === 'b_to_a' ? 'a_to_b' : 'b_to_a';
    expect(p.links[nvLink][wrKey]).toEqual({ alpha_us: r2(r.fits.file_write_batch!.alpha_us), GBps: r2(r.fits.file_write_batch!.GBps) });
    expect(p.tiers.find((t) => t.kind === 'nvme')!.write_GBps).toBe(Math.max(r2(r.fits.file_write_batch!.GBps), 0.01));
    expect(p.sources[`links[${nvLink}].${wrKey}.alpha_us`]).toMatch(/in the HIL executor's pattern, a layer's runs started at once and joined: time = requests x alpha \+ bytes \/ beta per batch, least squares over 12 batches .*for comparison \(not used here\), file-tier writes .*one request per size.*: alpha -?[0-9.]+ us, -?[0-9.]+ GB\/s$/);
    // the generic kernel line: FP16, INT8 and INT4 attention and the GEMVs; every dispatched kernel has its own curve
    expect(side.fits.kernels.points.length).toBe(r.measurements.kernels.filter((k) => k.precision !== 'int2' && !k.precision?.startsWith('mixed')).length);
    expect(Object.keys(p.gpu.attention_kernels!).sort()).toEqual(['fp16', 'int2', 'int4', 'int8', 'mixed', 'mixed_interleaved', 'mixed_kinds', 'mixed_sparse']);
    for (const c of Object.values(p.gpu.attention_kernels!)) expect(c.length).toBeGreaterThanOrEqual(2);
    // ... from the layer chains with each kernel's table, at the attention contexts
    const int2 = r.measurements.kernels_in_situ!.filter((x) => x.precision === 'int2').sort((a, b) => a.tokens - b.tokens);
    expect(int2.map((x) => x.tokens)).toEqual([...r.measurements.points.attention_contexts].sort((a, b) => a - b));
    expect(p.gpu.attention_kernels!.int2).toEqual(int2.map((x) => ({ tokens: x.tokens, us: r2(x.us) })));
    expect(p.sources['gpu.attention_kernels']).toMatch(/each attention kernel in situ/);
    // the scattered in-situ fits stay measured and reported beside the layout ones
    for (const k of ['h2d_in_situ', 'd2h_in_situ', 'h2d_layout', 'd2h_layout']) expect(side.fits[k].points.length).toBeGreaterThan(1);
    expect(formatFits(r.fits)).toMatch(/H2D situ .*\n.*D2H situ .*\n.*H2D layout .*\n.*D2H layout /);
    expect(formatFits(r.fits)).toContain(`  read by size ${r.fits.file_read_request_us!.map(([b, us]) => `${b / 1024} KiB ${us.toFixed(1)} us`).join(', ')} per request`);
    if (r.fits.file_read_batch!.batch_us > 0) expect(formatFits(r.fits)).toContain(`  batch fixed ${r.fits.file_read_batch!.batch_us.toFixed(1)} us per read batch, with the read batch line`);
    expect(formatFits(r.fits)).toContain(`  tail wave   not priced: ${r.fits.tail_wave!.reason}`);
    expect(formatFits(r.fits)).toMatch(/\n  batch idle  H2D [0-9.-]+ us \+ [0-9.]+ GB\/s, D2H .* per group [0-9.-]+ us, per change [0-9.-]+ us .*\n  batch busy  .*per group [0-9.-]+ us \(idle\)/);
    // a simulated layer (attention curve + the fitted GEMV line at the layer's weights) is the measured chain
    // per layer, to the curve's rounding (the curve is floored at 0.01 us where the host times the GEMV longer)
    const model = loadModel(fx.model);
    const layerLinear = linearTimeUs(p.gpu, model.weight_bytes_per_layer, model.flops_per_token_per_layer);
    expect(p.gpu.attention_curve!.map((c) => c.tokens)).toEqual(r.measurements.attention_in_situ.map((x) => x.tokens));
    for (const [i, x] of r.measurements.attention_in_situ.entries()) {
      const simulated = p.gpu.attention_curve![i].us + layerLinear;
      expect(Math.abs(simulated - Math.max(x.chain_us_per_layer, layerLinear + 0.01))).toBeLessThan(0.006);
    }
    expect(p.sources['gpu.attention_curve']).toMatch(/minus the layer GEMV as gpu\.linear_\* predicts it \([0-9.]+ us; in the chains without the attention [0-9.]+ us, measured alone [0-9.]+ us\)/);
    // each chain point's attention is its time beyond the same chain without the attention, timed in its trials
    for (const x of [...r.measurements.attention_in_situ, ...r.measurements.kernels_in_situ!]) {
      expect(x.gemv_us_per_layer).toBeGreaterThan(0);
      expect(x.us).toBeCloseTo(Math.max(0.01, x.chain_us_per_layer - x.gemv_us_per_layer!), 9);
    }
    // ... and the linear fit's layer point is that GEMV (median over the FP16 contexts), the LM head's alone
    const inChains = r.measurements.attention_in_situ.map((x) => x.gemv_us_per_layer!).sort((a, b) => a - b);
    const mid = inChains.length >> 1;
    expect(r.fits.linear.points[0].us).toBeCloseTo(inChains.length % 2 ? inChains[mid] : (inChains[mid - 1] + inChains[mid]) / 2, 9);
    expect(r.fits.linear.points[0].label).toMatch(/^gemv layer .* in the layer chains$/);
    expect(r.fits.linear.points.slice(1).map((x) => x.us)).toEqual(r.measurements.kernels.filter((k) => k.kind === 'gemv').slice(1).map((k) => k.us));
    // kvtier run accepts it
    const run = simulate({ trace: fx.trace, policy: 'lru-offload', model: fx.model, hardware: out, hbm_budget: '25%', group_size: 64 });
    expect(run.summary.tbt_ms.p50).toBeGreaterThan(0);
    rmSync(fx.dir, { recursive: true, force: true });
  }, 30_000);

  it("drops a base profile's tail wave where it prices none (the new curve holds the wave as measured)", async () => {
    const fx = makeHilFixture(256, 4);
    const base = loadHardware('h100-pcie5');
    const basePath = join(dir, 'base-with-waves.json');
    writeFileSync(basePath, JSON.stringify({ ...base, gpu: { ...base.gpu, attention_curve: [{ tokens: 16, us: 5 }, { tokens: 4096, us: 30 }], attention_waves: { slots: 264, blocks_per_split: 32, warps_per_head: 4, chunk_tokens: 16, us_per_chunk: 1, kernels: ['fp16'] } }, sources: { ...base.sources, 'gpu.attention_waves': 'given' } }));
    const r = await calibrate({ backend: 'host', base: basePath, model: fx.model, groupSize: 64, quick: true, fileDir: dir, date: '2026-11-28' });
    expect(r.fits.tail_wave!.waves).toBeUndefined();
    expect(r.profile.gpu.attention_waves).toBeUndefined();
    expect(r.profile.sources['gpu.attention_waves']).toBeUndefined();
    rmSync(fx.dir, { recursive: true, force: true });
  }, 30_000);
});

describe('executor-pattern file read batches', () => {
  it('cover most of a layer in runs of the asked length with gaps (never adjacent), or one run of 80%', async () => {
    const { layerRuns } = await import('../../hil/calibrate/file-batches.js');
    for (const run of [1, 2, 4, 9, 24]) {
      for (const start of [0, 5, 515]) {
        const runs = layerRuns(516, run, start);
        const covered = runs.reduce((a, [, n]) => a + n, 0);
        expect(covered / 516).toBeGreaterThan(run === 1 ? 0.45 : 0.6);
        for (const [i, [s, n]] of runs.entries()) {
          expect(n).toBe(run);
          expect(s + n).toBeLessThanOrEqual(516);
          if (i > 0) expect(s).toBeGreaterThan(runs[i - 1][0] + runs[i - 1][1]);
        }
      }
    }
    expect(layerRuns(516, 0, 300)).toEqual([[104, 412]]);
    expect(layerRuns(21, 24, 7)).toEqual([[5, 16]]); // a run longer than 80% of the layer: one run
    expect(layerRuns(21, 9, 20).length).toBeGreaterThan(0);
  });

  it('fit requests x alpha + bytes / beta by plain least squares', async () => {
    const { fitFileBatches } = await import('../../hil/calibrate/calibrate.js');
    const pts = [[420, 27e6], [200, 27e6], [40, 26e6], [1, 27e6], [5, 327680]].map(([requests, bytes]) => ({ requests, bytes, us: requests * 12 + bytes / 1.7e3 }));
    const f = fitFileBatches(pts);
    expect(f.alpha_us).toBeCloseTo(12, 6);
    expect(f.GBps).toBeCloseTo(1.7, 6);
  });

  it('fit a fixed time per batch + requests x alpha + bytes / beta, or fall back to the line without it', async () => {
    const { applyFileReadFit, fileRequestCurve, fitFileReadBatches } = await import('../../hil/calibrate/calibrate.js');
    // batches made exactly of 200 us + 12 us a request + bytes at 1.7 GB/s: the fit gives those back
    const at = (requests: number, bytes: number, kind: string, extra = 0) => ({ requests, bytes, us: 200 + requests * 12 + bytes / 1.7e3 + extra, kind });
    const pts = [at(194, 12713984, 'layer'), at(35, 20643840, 'layer'), at(1, 20316160, 'layer'), at(2, 131072, 'small'), at(13, 851968, 'small'), { ...at(310, 3809280, 'sized', 9999), request_bytes: 12288 }];
    const f = fitFileReadBatches(pts);
    expect(f.batch_us).toBeCloseTo(200, 6);
    expect(f.alpha_us).toBeCloseTo(12, 6);
    expect(f.GBps).toBeCloseTo(1.7, 6);
    expect(f.degenerate).toBeUndefined();
    expect(f.points).toHaveLength(5); // (the sized batch is not on the line)
    // a sized batch's time per request leaves the batch's fixed time out: (us - 200) / requests
    const curve = fileRequestCurve([{ requests: 310, us: 200 + 310 * 17, kind: 'sized', request_bytes: 12288 }], f, 65536)!;
    expect(curve[0][0]).toBe(12288);
    expect(curve[0][1]).toBeCloseTo(17, 2);
    // no fixed time in the data (the batches take less than the line's alpha implies): the line alone, batch 0, said why
    const less = [at(194, 12713984, 'layer', -200), at(35, 20643840, 'layer', -200), at(1, 20316160, 'layer', -200), at(2, 131072, 'small', -400), at(13, 851968, 'small', -390)];
    const g = fitFileReadBatches(less);
    expect(g.batch_us).toBe(0);
    expect(g.degenerate).toMatch(/a term below zero; requests x alpha \+ bytes \/ beta, no fixed time/);
    // two batches: too few for three terms
    expect(fitFileReadBatches(pts.slice(0, 2)).degenerate).toMatch(/^2 batches of whole blocks: no fixed time per batch/);
    // batches that take less per request than nothing: alpha held at 0, the fixed time and beta fitted again
    const flat = [[194, 12713984], [35, 20643840], [1, 20316160], [2, 131072], [13, 851968]].map(([requests, bytes]) => ({ requests, bytes, us: 300 + bytes / 1.7e3 - requests * 0.5, kind: requests < 20 ? 'small' : 'layer' }));
    const h = fitFileReadBatches(flat);
    expect(h.alpha_us).toBe(0);
    expect(h.batch_us).toBeGreaterThan(0);
    expect(h.degenerate).toBeUndefined();
    // batches whose bytes follow their requests exactly cannot tell the terms apart: the line's fallback, not a throw
    const same = [1, 2, 3, 4].map((n) => ({ requests: n, bytes: n * 65536, us: 50 + n * 40, kind: 'small' }));
    const k = fitFileReadBatches(same);
    expect(k.batch_us).toBe(0);
    expect(k.degenerate).toMatch(/alpha and beta cannot be told apart/);
    // every batch of one request count: its fixed time and its requests' alpha cannot be told apart
    const tens = [65536, 131072, 262144, 524288].map((bytes) => ({ requests: 10, bytes, us: 200 + bytes / 1.7e3, kind: 'small' }));
    const t = fitFileReadBatches(tens);
    expect(t.batch_us).toBe(0);
    expect(t.degenerate).toMatch(/cannot be solved from these batches/);
    // set on the NVMe read direction with its source; a fit without one removes both
    const p = loadHardware('h100-pcie5');
    const li = applyFileReadFit(p, f, 'by test', 'reads', 'form', curve);
    const rd = p.links[li].b === 'nvme' ? 'b_to_a' : 'a_to_b';
    expect(p.links[li][rd].batch_us).toBe(200);
    expect(p.sources[`links[${li}].${rd}.batch_us`]).toMatch(/^by test: the same fit's fixed time per batch/);
    applyFileReadFit(p, g, 'by test', 'reads');
    expect(p.links[li][rd].batch_us).toBeUndefined();
    expect(p.links[li][rd].request_us).toBeUndefined();
    expect(p.sources[`links[${li}].${rd}.batch_us`]).toBeUndefined();
    expect(p.sources[`links[${li}].${rd}.request_us`]).toBeUndefined();
  });
});

describe.skipIf(!host.available)(`executor-pattern file read batches, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('measure layer and small batches, with or without the copies to the device after each batch', async () => {
    const { measureFileBatches } = await import('../../hil/calibrate/file-batches.js');
    const { openBackend } = await import('../../hil/backend.js');
    const b = openBackend('host');
    try {
      for (const h2dCopies of [false, true]) {
        // two sizes below the 12 KiB slot (3000 B rounds up to 4 KiB, 5000 B to 8 KiB) and one not below it
        const r = await measureFileBatches(b, { dir, threads: 6, blockBytes: 12288, blocksPerLayer: 40, layers: 3, rounds: 2, h2dCopies, requestBytes: [3000, 5000, 12288] });
        expect(r.h2d_copies).toBe(h2dCopies);
        expect(r.threads).toBe(6);
        expect(r.points.filter((p) => p.kind === 'layer')).toHaveLength(6);
        expect(r.points.filter((p) => p.kind === 'small')).toHaveLength(6);
        for (const p of r.points) {
          expect(p.us).toBeGreaterThan(0);
          expect(p.bytes % (p.kind === 'sized' ? p.request_bytes! : 12288)).toBe(0);
          // the host's wall time around each batch beyond the batch's own: handing it over and taking its completion
          expect(p.host_us).toBeGreaterThan(0);
        }
        // per size and layer one batch of one request per block over ~80% of the layer (32 of 40)
        expect(r.points.filter((p) => p.kind === 'sized').map((p) => [p.request_bytes, p.layer, p.requests, p.bytes])).toEqual([4096, 8192].flatMap((q) => [0, 1, 2].map((l) => [q, l, 32, 32 * q])));
        expect(r.GBps).toBeGreaterThan(0);
      }
    } finally {
      b.close();
    }
  });

  it('spread the measured layers over a file of more layers, as a run\'s file holds every layer', async () => {
    const { measureFileBatches, measureFileWriteBatches, fileLayerOf } = await import('../../hil/calibrate/file-batches.js');
    expect([0, 1, 2, 3].map((l) => fileLayerOf({ layers: 4, fileLayers: 32 }, l))).toEqual([0, 8, 16, 24]);
    expect([0, 1, 2].map((l) => fileLayerOf({ layers: 3 }, l))).toEqual([0, 1, 2]);
    const { openBackend } = await import('../../hil/backend.js');
    const b = openBackend('host');
    try {
      const o = { dir, threads: 4, blockBytes: 8192, blocksPerLayer: 20, layers: 2, fileLayers: 7, rounds: 1, requestBytes: [3000] };
      const r = await measureFileBatches(b, o);
      expect(r.file_bytes).toBe(7 * 20 * 8192);
      // layer batches at file layers 0 and 3; each small batch reads the next measured layer's blocks
      expect(r.points.filter((p) => p.kind === 'layer').map((p) => p.layer)).toEqual([0, 3]);
      expect(r.points.filter((p) => p.kind === 'small').map((p) => p.layer)).toEqual([3, 0]);
      expect(r.points.filter((p) => p.kind === 'sized').map((p) => p.layer)).toEqual([0, 3]);
      const w = await measureFileWriteBatches(b, o);
      expect(w.file_bytes).toBe(7 * 20 * 8192);
      expect(w.points.map((p) => p.layer)).toEqual([0, 3]);
      await expect(measureFileBatches(b, { ...o, fileLayers: 1 })).rejects.toThrow(/fileLayers 1 must be an integer of at least layers \(2\)/);
    } finally {
      b.close();
    }
  });
});

describe('degenerate fits', () => {
  it('flag a time that does not grow with bytes instead of throwing, and stay positive', async () => {
    const { fitAlphaBeta: fab, fitPerRequest } = await import('../../hil/calibrate/fit-linear.js');
    // noisy points where the bigger transfer took less time
    const pts = [{ bytes: 1 << 20, us: 90 }, { bytes: 4 << 20, us: 80 }, { bytes: 16 << 20, us: 70 }];
    const f = fab(pts, true);
    expect(f.degenerate).toMatch(/non-positive time per byte/);
    expect(f.alpha_us).toBe(0);
    expect(f.GBps).toBeCloseTo((16 << 20) / 70 / 1e3, 9);
    const g = fitPerRequest(pts.map((p, i) => ({ ...p, requests: 4 - i })));
    expect(g.GBps).toBeGreaterThan(0);
    // well-behaved points carry no flag
    expect(fab([{ bytes: 1e6, us: 25 }, { bytes: 2e6, us: 45 }], true).degenerate).toBeUndefined();
  });

  it('batches whose requests are all of one size: the time per byte through the origin, flagged, not a singular system', async () => {
    const { fitPerRequest } = await import('../../hil/calibrate/fit-linear.js');
    // 8192-byte requests: 12, 24 and 48 of them; times exactly 2 us + 8192 B / 4 GB/s per request
    const pts = [12, 24, 48].map((n) => ({ requests: n, bytes: 8192 * n, us: n * (2 + 8192 / 4e3) }));
    for (const relative of [true, false]) {
      const f = fitPerRequest(pts, relative);
      expect(f.degenerate).toBe("every point's requests are 8192 bytes each: alpha and beta cannot be told apart; alpha 0, the time per byte through the origin");
      expect(f.alpha_us).toBe(0);
      // the whole per-request time per byte: (2 + 2.048) us / 8192 B
      expect(1 / f.GBps / 1e3).toBeCloseTo((2 + 8192 / 4e3) / 8192, 12);
      expect(f.max_abs_residual).toBeLessThan(1e-12);
    }
  });
});

describe('kernelSlowdown (gpu.kernel_slowdown_under_h2d / _d2h from the layout batches)', () => {
  const pt = (us: number, extra: number, cover: number) => ({ direction: 'h2d' as const, label: 'x', runs: 1, bytes: 1, split: { h2d: { runs: 1, bytes: 1 }, d2h: { runs: 0, bytes: 0 } }, switches: 0, groups: 8, lengths: {}, us, enqueue_us: 0, gate_us: 1, compute_cover: cover, compute_extra_us: extra });
  it('sums the extra compute time over the copy time of the batches that ran wholly under compute', () => {
    // (10 + 30) / (100 + 300): the batch with cover 0.9 is left out
    expect(kernelSlowdown([pt(100, 10, 1.3), pt(300, 30, 1.0), pt(1000, 500, 0.9)])).toEqual({ fraction: 0.1, batches: 2, copyUs: 400 });
    expect(kernelSlowdown([pt(100, -5, 2)])!.fraction).toBe(-0.05);
    expect(kernelSlowdown([pt(100, 10, 0.5)])).toBeNull();
    expect(kernelSlowdown([])).toBeNull();
  });
});

describe('benchmarked attention tables', () => {
  it("mixed_kinds is mixed_sparse's runs with an INT4 block at a third and an INT3 block at two thirds of the table", async () => {
    const { tableOf } = await import('../../hil/calibrate/measure.js');
    const n = 96;
    const sparse = tableOf('mixed_sparse', () => 'fp16');
    const kinds = tableOf('mixed_kinds', () => 'fp16');
    const seq = (f: (i: number, n: number) => string) => Array.from({ length: n }, (_, i) => f(i, n));
    expect(seq(sparse).slice(0, 34)).toEqual([...Array(16).fill('int2'), ...Array(16).fill('int8'), 'int2', 'int2']);
    const diff = seq(kinds).flatMap((p, i) => (p === seq(sparse)[i] ? [] : [[i, p]]));
    expect(diff).toEqual([[32, 'int4'], [64, 'int3']]);
  });
});

describe('calibration progress count', () => {
  it("counts the plan's issue timing, the launch plan's, the converting plan's and the host pace readings on cuda with a plan, and none otherwise", () => {
    const m = loadModel('llama-3-8b');
    for (const quick of [true, false]) {
      const pts = defaultCalibrationPoints(quick);
      const plan = { model: 'llama-3-8b', hardware: 'h100-pcie5' };
      const cudaPlan = measurementCount({ model: m, quick, plan }, pts, true);
      const cudaNone = measurementCount({ model: m, quick }, pts, true);
      expect(PACE_READINGS).toBe(2);
      expect(cudaPlan - cudaNone).toBe(3 + PACE_READINGS);
      // the host backend takes no plan timing, with or without a plan
      expect(measurementCount({ model: m, quick, plan }, pts, false)).toBe(measurementCount({ model: m, quick }, pts, false));
    }
  });
});
