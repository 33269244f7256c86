// The set-up's warm launches: each conversion width and rotation a plan uses launched once on scratch
// buffers before the timed steps (CUDA loads a kernel's module at its first launch), nothing the plan
// owns touched; and the run reporting how many it made, on a plan that converts and one that does not.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import { hilRun, recordAndLower } from '../../hil/executor/hil-run.js';
import type { LowOp } from '../../hil/executor/lowered-plan.js';
import { warmKernels, warmSetOf } from '../../hil/executor/warm-kernels.js';
import { blockBytes, kMetaOffset } from '../../hil/kv-format.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');
const g = { kvHeads: 2, blockTokens: 16, headDim: 64, groupSize: 64 };

describe('the kernels a plan warms', () => {
  it('takes each conversion width and rotation once, in first-use order, from every step', () => {
    const q = (bits: 2 | 4 | 8): LowOp => ({ o: 'quant', src: 'arena', srcOff: 0, dst: 'arena', dstOff: 64, bits });
    const d = (bits: 2 | 4 | 8): LowOp => ({ o: 'dequant', src: 'arena', srcOff: 0, dst: 'arena', dstOff: 64, bits });
    const steps = [
      { ops: [q(4), { o: 'gemv', layer: 0, lmHead: false } as LowOp, q(2), q(4)] },
      { ops: [d(2), { o: 'rotate', s: 0, what: 'q' } as LowOp, { o: 'rotate', s: 0, what: 'out' } as LowOp, d(8), q(2)] },
      { ops: [{ o: 'rotate', s: 1, what: 'block', region: 'arena', offset: 0 } as LowOp, { o: 'rotate', s: 0, what: 'block', region: 'arena', offset: 0 } as LowOp] },
    ];
    expect(warmSetOf(steps)).toEqual({
      quant: [4, 2],
      dequant: [2, 8],
      rotate: [
        { stream: 'compute', dtype: 'f32' },
        { stream: 'memory', dtype: 'f16' },
        { stream: 'compute', dtype: 'f16' },
      ],
    });
    expect(warmSetOf([{ ops: [{ o: 'gemv', layer: 0, lmHead: false }, { o: 'attn', layer: 0, tableOff: 0, tokens: 16, uniform: 16 }] }])).toEqual({ quant: [], dequant: [], rotate: [] });
  });

  it('launches each once on scratch buffers of its own, waits for them and frees the buffers, even when a launch fails', async () => {
    const calls: string[] = [];
    let next = 100;
    const fake = (failOn?: string) =>
      ({
        kind: 'cuda',
        alloc: (kind: string, bytes: number) => (calls.push(`alloc ${kind} ${bytes}`), next++),
        free: (r: number) => void calls.push(`free ${r}`),
        write: (r: number, off: number, data: Uint16Array) => void calls.push(`write ${r} ${off} ${data.byteLength} first ${data[0].toString(16)} last ${data[data.length - 1].toString(16)}`),
        quantize: (s: string, o: { src: number; codes: number; meta: number; metaOffset: number; n: number; bits: number; groupSize: number }) => {
          if (failOn === `quant ${o.bits}`) throw new Error('launch failed');
          calls.push(`quant ${s} ${o.src}->${o.codes} meta@${o.metaOffset} n ${o.n} bits ${o.bits} g ${o.groupSize}`);
        },
        dequantize: (s: string, o: { codes: number; dst: number; metaOffset: number; n: number; bits: number }) => void calls.push(`dequant ${s} ${o.codes}->${o.dst} meta@${o.metaOffset} n ${o.n} bits ${o.bits}`),
        hadamard: (s: string, o: { data: number; rows: number; n: number; dtype: string }) => void calls.push(`hadamard ${s} ${o.data} ${o.rows}x${o.n} ${o.dtype}`),
        synchronize: async () => void calls.push('sync'),
      }) as unknown as NativeBackend;
    // one block of g: 2 sections of 2 x 16 x 64 elements = 4096 halves (8192 B); the f32 rows: 8 x 64 x 4 = 2048 B
    const n = 4096;
    const launches = await warmKernels(fake(), g, 8, { quant: [4], dequant: [4, 2], rotate: [{ stream: 'memory', dtype: 'f16' }, { stream: 'compute', dtype: 'f32' }] });
    expect(launches).toBe(5);
    expect(blockBytes(g, 'int8')).toBeLessThan(8192);
    expect(calls).toEqual([
      'alloc device 8192',
      'alloc device 8192',
      `write 100 0 8192 first 3c00 last ${(0x3c00 + ((n - 1) % 64)).toString(16)}`,
      `quant memory 100->101 meta@${kMetaOffset(g, 'int4')} n ${n} bits 4 g 64`,
      `dequant memory 101->100 meta@${kMetaOffset(g, 'int4')} n ${n} bits 4`,
      // a width only dequantized: its codes made first
      `quant memory 100->101 meta@${kMetaOffset(g, 'int2')} n ${n} bits 2 g 64`,
      `dequant memory 101->100 meta@${kMetaOffset(g, 'int2')} n ${n} bits 2`,
      'hadamard memory 100 64x64 f16',
      'hadamard compute 100 8x64 f32',
      'sync',
      'free 100',
      'free 101',
    ]);
    // nothing to warm: nothing allocated
    calls.length = 0;
    expect(await warmKernels(fake(), g, 8, { quant: [], dequant: [], rotate: [] })).toBe(0);
    expect(calls).toEqual([]);
    // a failed launch: the error, and the buffers freed
    await expect(warmKernels(fake('quant 2'), g, 8, { quant: [2], dequant: [], rotate: [] })).rejects.toThrow('launch failed');
    expect(calls.slice(-2)).toEqual([`free ${next - 2}`, `free ${next - 1}`]);
  });
});

describe.skipIf(!host.available)(`warm launches in a run, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  const fx = makeHilFixture(256, 20);
  afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));
  it("a run reports as many warm launches as its plan's distinct conversions and rotations; a plan without them makes none", async () => {
    for (const [policy, convert] of [['smartkv', true], ['full', false]] as const) {
      const config = { trace: fx.trace, policy, policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 };
      const set = warmSetOf(recordAndLower(config, { backend: 'host' }).lowered.steps);
      const want = set.quant.length + set.dequant.length + set.rotate.length;
      expect(want > 0, policy).toBe(convert);
      const x = await hilRun(config, { backend: 'host', nvmeDir: fx.dir, verify: true, seed: 5 });
      expect(x.hil.warm_launches, policy).toBe(want);
      expect(x.hil.verify!.mismatches, policy).toBe(0);
    }
  }, 120_000);
});
