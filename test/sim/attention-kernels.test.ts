import { describe, expect, it } from 'vitest';
import type { GpuSpec } from '../../sim/hardware/profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { attentionTimeUs, mixedChangeUs, mixedKindsUs, tableKernelUs } from '../../sim/roofline.js';
import type { Policy } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

const curve = [
  { tokens: 1000, us: 10 },
  { tokens: 2000, us: 20 },
];
const kernels = {
  fp16: [
    { tokens: 1000, us: 5 },
    { tokens: 2000, us: 8 },
  ],
  mixed: [
    { tokens: 1000, us: 7 },
    { tokens: 2000, us: 12 },
  ],
  int4: [
    { tokens: 1000, us: 4 },
    { tokens: 2000, us: 5 },
  ],
};
const gpu = (over: Partial<GpuSpec> = {}): GpuSpec => ({ name: 'g', hbm_bandwidth_GBps: 1, fp16_TFLOPs: 1, kernel_launch_us: 3, reserved_GiB: 0, attention_curve: curve, ...over });

describe('attention time per dispatched kernel', () => {
  it('adds the measured kernel difference to the in-situ FP16 curve at the same context', () => {
    const g = gpu({ attention_kernels: kernels });
    // curve at 1500 = 15; fp16 kernel 6.5, mixed 9.5, int4 4.5
    expect(attentionTimeUs(g, 1500, 0, 0, 'fp16')).toBe(15);
    expect(attentionTimeUs(g, 1500, 0, 0, 'mixed')).toBe(18);
    expect(attentionTimeUs(g, 1500, 0, 0, 'int4')).toBe(13);
    // a kernel without its own measurement, or a profile without the table: the FP16 curve
    expect(attentionTimeUs(g, 1500, 0, 0, 'int8')).toBe(15);
    expect(attentionTimeUs(gpu(), 1500, 0, 0, 'mixed')).toBe(15);
    // never below the launch floor (min of the curve's first point and the launch time: 3)
    expect(attentionTimeUs(gpu({ attention_kernels: { fp16: kernels.fp16, int2: [{ tokens: 1000, us: -50 }, { tokens: 2000, us: -50 }] } }), 1000, 0, 0, 'int2')).toBe(3);
  });

  it('the table kernel slows with its share of mixed 8-block windows: that share of the interleaved curve over the make-up; the sparse curve plays no part', () => {
    const tab = {
      fp16: kernels.fp16,
      mixed: [{ tokens: 1000, us: 20 }, { tokens: 2000, us: 30 }],
      mixed_interleaved: [{ tokens: 1000, us: 26 }, { tokens: 2000, us: 42 }],
      mixed_sparse: [{ tokens: 1000, us: 23 }, { tokens: 2000, us: 36 }],
    };
    // full slowdown: interleaved - mixed = 6 at 1000 tokens, 12 at 2000, 9 at 1500
    expect(mixedChangeUs(tab, 1000, 0.05)).toBeCloseTo(0.3, 12);
    expect(mixedChangeUs(tab, 1000, 0.5)).toBeCloseTo(3, 12);
    expect(mixedChangeUs(tab, 1000, 1)).toBeCloseTo(6, 12);
    expect(mixedChangeUs(tab, 1500, 0.25)).toBeCloseTo(2.25, 12);
    expect(mixedChangeUs(tab, 2000, 0.0625)).toBeCloseTo(0.75, 12);
    // the same without the sparse curve; never past the full slowdown, never below 0
    const { mixed_sparse: _, ...noSparse } = tab;
    expect(mixedChangeUs(noSparse, 2000, 0.0625)).toBeCloseTo(0.75, 12);
    expect(mixedChangeUs(tab, 1000, 1.5)).toBeCloseTo(6, 12);
    expect(mixedChangeUs(tab, 1000, -0.5)).toBe(0);
    // nothing without the interleaved curve, or where interleaving is not slower
    expect(mixedChangeUs({ fp16: tab.fp16, mixed: tab.mixed }, 1000, 0.5)).toBe(0);
    expect(mixedChangeUs({ ...tab, mixed_interleaved: tab.mixed }, 1000, 0.5)).toBe(0);
    // in the attention time: curve 10 + (mixed 20 - fp16 5) + 6 x 0.4 at 1000 tokens; only for 'mixed'
    const g = gpu({ attention_kernels: tab });
    expect(attentionTimeUs(g, 1000, 0, 0, 'mixed', 0.4)).toBeCloseTo(10 + 15 + 2.4, 12);
    expect(attentionTimeUs(g, 1000, 0, 0, 'mixed', 0)).toBe(25);
    expect(attentionTimeUs(g, 1000, 0, 0, 'fp16', 0.5)).toBe(10);
  });

  it('the table kernel slows for each quantized precision beyond two, however few its blocks: half of mixed_kinds less mixed_sparse each', () => {
    const tab = {
      fp16: kernels.fp16,
      int8: [{ tokens: 1000, us: 20 }, { tokens: 2000, us: 30 }],
      int2: [{ tokens: 1000, us: 20 }, { tokens: 2000, us: 30 }],
      mixed: [{ tokens: 1000, us: 20 }, { tokens: 2000, us: 30 }],
      mixed_sparse: [{ tokens: 1000, us: 21 }, { tokens: 2000, us: 32 }],
      mixed_kinds: [{ tokens: 1000, us: 29 }, { tokens: 2000, us: 40 }],
    };
    // blocks per precision in kv-cache BITS order: 16, 8, 4, 2, 3
    expect(mixedKindsUs(tab, 1000, [1, 300, 0, 700, 0])).toBe(0);
    // INT8, INT4 (one block), INT2: one beyond two, (29 - 21) / 2 = 4 at 1000 tokens; at 1500: (34.5 - 26.5) / 2
    expect(mixedKindsUs(tab, 1000, [1, 300, 1, 700, 0])).toBe(4);
    expect(mixedKindsUs(tab, 1500, [0, 300, 1, 700, 0])).toBe(4);
    // all four quantized precisions: two beyond two; FP16 blocks do not count
    expect(mixedKindsUs(tab, 1000, [5, 300, 2, 700, 1])).toBe(8);
    expect(mixedKindsUs(tab, 1000, [5, 0, 2, 700, 0])).toBe(0);
    // nothing without either curve, or where mixed_kinds is not slower
    const { mixed_kinds: _, ...noKinds } = tab;
    expect(mixedKindsUs(noKinds, 1000, [1, 300, 1, 700, 1])).toBe(0);
    const { mixed_sparse: __, ...noSparse } = tab;
    expect(mixedKindsUs(noSparse, 1000, [1, 300, 1, 700, 1])).toBe(0);
    expect(mixedKindsUs({ ...tab, mixed_kinds: tab.mixed }, 1000, [1, 300, 1, 700, 1])).toBe(0);
    // in the attention time of a 'mixed' layer: curve 10 + (table make-up 20 - fp16 5) + 4, no changes
    const g = gpu({ attention_kernels: tab });
    expect(attentionTimeUs(g, 1000, 0, 0, 'mixed', 0, [0, 300, 1, 700, 0])).toBeCloseTo(10 + 15 + 4, 12);
    expect(attentionTimeUs(g, 1000, 0, 0, 'mixed', 0, [0, 300, 0, 700, 0])).toBeCloseTo(10 + 15, 12);
  });

  it('the table kernel by its make-up: INT8 and INT2 blocks at their curves, FP16 and INT4 blocks at the mixed curve', () => {
    const k = {
      fp16: kernels.fp16,
      mixed: [{ tokens: 1000, us: 20 }, { tokens: 2000, us: 30 }],
      int8: [{ tokens: 1000, us: 12 }, { tokens: 2000, us: 16 }],
      int2: [{ tokens: 1000, us: 14 }, { tokens: 2000, us: 14 }],
    };
    // blocks per precision in BITS order 16, 8, 4, 2, 3: at 1500 tokens mixed 25, int8 14, int2 14
    expect(tableKernelUs(k, 1500, [1, 0, 3, 0, 0])).toBe(25);
    expect(tableKernelUs(k, 1500, [0, 3, 0, 1, 0])).toBe(14);
    // 2 FP16 + 6 INT2 + 2 INT3 (at INT2's curve) at 1000 tokens: (2 x 20 + 8 x 14) / 10
    expect(tableKernelUs(k, 1000, [2, 0, 0, 6, 2])).toBeCloseTo(15.2, 12);
    // a precision whose curve is missing, or no blocks: undefined (the caller keeps the mixed curve)
    expect(tableKernelUs({ fp16: k.fp16, mixed: k.mixed }, 1000, [1, 1, 0, 0, 0])).toBeUndefined();
    expect(tableKernelUs(k, 1000, [0, 0, 0, 0, 0])).toBeUndefined();
    // in the attention time: curve 10 + (table 15.2 - fp16 5) at 1000 tokens; without the counts the mixed curve
    const g = gpu({ attention_kernels: k });
    expect(attentionTimeUs(g, 1000, 0, 0, 'mixed', 0, [2, 0, 0, 6, 2])).toBeCloseTo(20.2, 12);
    expect(attentionTimeUs(g, 1000, 0, 0, 'mixed', 0)).toBe(25);
    expect(attentionTimeUs({ ...g, attention_kernels: { fp16: k.fp16, mixed: k.mixed } }, 1000, 0, 0, 'mixed', 0, [1, 1, 0, 0, 0])).toBe(25);
  });

  it('with INT8 and INT2 curves the interleaved table is measured against its make-up, half INT8 and half INT2', () => {
    const tab = {
      fp16: kernels.fp16,
      mixed: [{ tokens: 1000, us: 40 }, { tokens: 2000, us: 50 }],
      int8: [{ tokens: 1000, us: 18 }, { tokens: 2000, us: 30 }],
      int2: [{ tokens: 1000, us: 22 }, { tokens: 2000, us: 30 }],
      // make-up 20 at 1000 tokens (full slowdown 8), 30 at 2000 (full 10)
      mixed_interleaved: [{ tokens: 1000, us: 28 }, { tokens: 2000, us: 40 }],
      mixed_sparse: [{ tokens: 1000, us: 24 }, { tokens: 2000, us: 40 }],
    };
    expect(mixedChangeUs(tab, 1000, 0.05)).toBeCloseTo(0.4, 12);
    expect(mixedChangeUs(tab, 1000, 0.3)).toBeCloseTo(2.4, 12);
    expect(mixedChangeUs(tab, 2000, 0.0625)).toBeCloseTo(0.625, 12);
    expect(mixedChangeUs(tab, 2000, 1)).toBeCloseTo(10, 12);
    // without the INT8 and INT2 curves the make-up is the mixed curve: interleaving is then not slower
    const { int8: _8, int2: _2, ...noInt } = tab;
    expect(mixedChangeUs(noInt, 1000, 0.5)).toBe(0);
  });

  it('profiles validate the table: known kernel names, ascending points', () => {
    const hw = tinyHardware();
    hw.gpu.attention_curve = curve;
    hw.gpu.attention_kernels = kernels;
    expect(() => validateProfile(hw, 'p.json')).not.toThrow();
    (hw.gpu.attention_kernels as Record<string, unknown>).int3 = curve;
    expect(() => validateProfile(hw, 'p.json')).toThrow(/attention_kernels\.int3 is not a known field.*fp16, int8, int4, int2, mixed, mixed_sparse, mixed_interleaved, mixed_kinds/);
    delete (hw.gpu.attention_kernels as Record<string, unknown>).int3;
    hw.gpu.attention_kernels!.int8 = [curve[1], curve[0]];
    expect(() => validateProfile(hw, 'p.json')).toThrow(/attention_kernels\.int8\[1\]\.tokens must be above the previous point's/);
  });

  it('the replay times each layer with the kernel its attended precisions select', () => {
    const hw = tinyHardware();
    // attention = 100 us at any context; mixed +7, int4 -2 (curves flat in tokens)
    const flat = (us: number) => [
      { tokens: 1, us },
      { tokens: 100, us },
    ];
    hw.gpu.attention_curve = flat(100);
    hw.gpu.attention_kernels = { fp16: flat(10), mixed: flat(17), int4: flat(8) };
    const h = tinyHeader(8, 2);
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 2, trace[0].layers[0].nBlocks, [
      { name: 'hbm', capacityBytes: 1e6 },
      { name: 'dram', capacityBytes: 1e6 },
    ]);
    // step 0: layer 0 block 0 to 4 bits, layer 1 blocks 0 and 1 (the new block 2 is FP16): both mixed;
    // step 1 (no new block): layer 1 block 2 to 4 bits too, so layer 1 is INT4 throughout
    const policy: Policy = {
      name: 'scripted',
      decide: (v, a) => {
        if (v.step === 0 && v.layer === 0) a.demote(0, 0, 'hbm', 4);
        if (v.step === 0 && v.layer === 1) for (const b of [0, 1]) a.demote(1, b, 'hbm', 4);
        if (v.step === 1 && v.layer === 1) a.demote(1, 2, 'hbm', 4);
      },
      observe: () => undefined,
    };
    const ex = new SimExecutor(hw, tinyModel, { traceSteps: 10 });
    new ReplayDriver(h, cache, policy, ex, 100).run(trace, () => undefined);
    const attn = ex.spans.filter((s) => s.stream === 'compute' && s.name === 'attention').map((s) => s.end - s.start);
    expect(attn).toEqual([107, 107, 107, 98]);
    // with the interleaved table curve (+10 over mixed with every 8-block window mixed): a 3-block table
    // is one window, and the mixed layers' window holds two precisions: +10
    hw.gpu.attention_kernels = { fp16: flat(10), mixed: flat(17), int4: flat(8), mixed_interleaved: flat(27) };
    const cache2 = new KVCache(tinyModel, 4, 2, trace[0].layers[0].nBlocks, [
      { name: 'hbm', capacityBytes: 1e6 },
      { name: 'dram', capacityBytes: 1e6 },
    ]);
    const ex2 = new SimExecutor(hw, tinyModel, { traceSteps: 10 });
    new ReplayDriver(h, cache2, policy, ex2, 100).run(trace, () => undefined);
    expect(ex2.spans.filter((s) => s.stream === 'compute' && s.name === 'attention').map((s) => s.end - s.start)).toEqual([117, 117, 117, 98]);
    // with the INT4 blocks at 2 bits and an INT2 curve: layer 0 (1 INT2 + 2 FP16 blocks, its one window
    // mixed) is priced by its make-up, (1 x int2 13 + 2 x mixed 17) / 3 = 47 / 3, + 10 for the mixed
    // window; layer 1 at step 0 (2 INT2 + 1 FP16): (2 x 13 + 17) / 3 + 10; at step 1 INT2 throughout: 100 + 13 - 10
    hw.gpu.attention_kernels = { fp16: flat(10), mixed: flat(17), int4: flat(8), int2: flat(13), mixed_interleaved: flat(27) };
    const policy2: Policy = {
      name: 'scripted-int2',
      decide: (v, a) => {
        if (v.step === 0 && v.layer === 0) a.demote(0, 0, 'hbm', 2);
        if (v.step === 0 && v.layer === 1) for (const b of [0, 1]) a.demote(1, b, 'hbm', 2);
        if (v.step === 1 && v.layer === 1) a.demote(1, 2, 'hbm', 2);
      },
      observe: () => undefined,
    };
    const cache3 = new KVCache(tinyModel, 4, 2, trace[0].layers[0].nBlocks, [
      { name: 'hbm', capacityBytes: 1e6 },
      { name: 'dram', capacityBytes: 1e6 },
    ]);
    const ex3 = new SimExecutor(hw, tinyModel, { traceSteps: 10 });
    new ReplayDriver(h, cache3, policy2, ex3, 100).run(trace, () => undefined);
    const got = ex3.spans.filter((s) => s.stream === 'compute' && s.name === 'attention').map((s) => s.end - s.start);
    const want = [100 + 47 / 3 - 10 + 10, 100 + 43 / 3 - 10 + 10, 100 + 47 / 3 - 10 + 10, 103];
    expect(got.length).toBe(4);
    for (const [i, x] of got.entries()) expect(x).toBeCloseTo(want[i], 9);
  });
});
