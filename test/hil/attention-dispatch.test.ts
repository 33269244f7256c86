// The attention dispatch (hil/native/common/attention-plan.h) through the addon's attentionPlan on
// the host build: which kernel, stages, warps, grid, splits, early chunks and L2 policy a shape
// and the options get, with every expectation worked out by hand below; and the options' parser,
// which refuses a bad option by name with its valid values. No GPU: the device is described.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AttentionCallShape, AttentionDeviceFacts, AttentionOptions, AttentionPlan } from '../../hil/addon-types.js';
import { attnFlag, formatAttentionOptions, resolveAttentionOptions } from '../../hil/attention-options.js';
import { openBackend } from '../../hil/backend.js';
import { attentionKernels, hilRun } from '../../hil/executor/hil-run.js';
import type { LowStep } from '../../hil/executor/lowered-plan.js';
import { backendAvailability } from './availability.js';
import { addon, H100 } from './dispatch-facts.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');

// Llama-3-8B's attention layer: 32 query heads over 8 kv heads of dim 128, 16-token blocks, group 128.
const LLAMA = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128 };
const plan = (shape: Partial<AttentionCallShape> & { contextTokens: number }, options: AttentionOptions = {}, device: AttentionDeviceFacts = H100): AttentionPlan =>
  addon().attentionPlan({ ...LLAMA, ...shape }, options, device);

describe.skipIf(!host.available)(`attention dispatch (host build)${host.available ? '' : ` — skipped: ${host.reason}`}`, () => {
  describe('uniform FP16 tables (Llama-3-8B layer, H100 facts)', () => {
    // mma-fp16 at 3 stages: 4 warps x 3 x 8 KiB = 98304 B dynamic + 3828 B static + 1 KiB reserve
    // = 103156 B per block -> 233472 / 103156 = 2 resident blocks; target 2 x 132 = 264 blocks,
    // 8 blocks (kv heads) per split -> 33 splits wanted.
    it('4k: 256 chunks, at most 256 / 8 = 32 splits of 2 chunks per warp; the KV (16 MiB) fits the L2: 1 early chunk, no policy', () => {
      expect(plan({ contextTokens: 4096, uniformPrecision: 'fp16' })).toEqual({
        kernel: 'mma-fp16', stages: 3, headWarps: false, queryHeadsPerWarp: 4, warpsPerBlock: 4, grid: [32, 8], dynamicSmemBytes: 98304,
        bulkCopy: true, earlyChunks: 1, kvExceedsL2: false, l2Policy: 'normal', residentBlocks: 2, splits: 32, chunksPerWarp: 2,
        reduce: 'split', pdlReduce: true,
      });
    });
    it('32k: 33 wanted, 16 chunks per warp, trimmed to 2048 / 64 = 32 splits; the KV (128 MiB) streams: 2 early chunks, evict-first', () => {
      expect(plan({ contextTokens: 32768, uniformPrecision: 'fp16' })).toMatchObject({
        kernel: 'mma-fp16', grid: [32, 8], splits: 32, chunksPerWarp: 16, earlyChunks: 2, kvExceedsL2: true, l2Policy: 'evict-first',
      });
    });
    it('128k: 8192 chunks, 33 splits give ceil(8192 / 132) = 63 chunks per warp, and ceil(8192 / 252) = 33 splits keep them', () => {
      expect(plan({ contextTokens: 131072, uniformPrecision: 'fp16' })).toMatchObject({ kernel: 'mma-fp16', splits: 33, grid: [33, 8], chunksPerWarp: 63, earlyChunks: 2, l2Policy: 'evict-first' });
    });
    it('the L2 rule turns at KV bytes = L2 bytes: 8 kv heads x 128 dims x 2 (K, V) x 2 B = 4 KiB per token, 12800 tokens in 50 MiB', () => {
      expect(plan({ contextTokens: 12800, uniformPrecision: 'fp16' })).toMatchObject({ kvExceedsL2: false, earlyChunks: 1, l2Policy: 'normal' });
      expect(plan({ contextTokens: 12801, uniformPrecision: 'fp16' })).toMatchObject({ kvExceedsL2: true, earlyChunks: 2, l2Policy: 'evict-first' });
    });
    it('the device\'s resident blocks replace the estimate: 3 per SM -> 396 / 8 = 50 wanted, 11 chunks per warp, ceil(2048 / 44) = 47 splits', () => {
      expect(plan({ contextTokens: 32768, uniformPrecision: 'fp16' }, {}, { ...H100, residentBlocks: 3 })).toMatchObject({ residentBlocks: 3, splits: 47, chunksPerWarp: 11 });
    });
  });

  describe('uniform INT4 tables', () => {
    it('below 16k tokens (1023 chunks per kv head): 4 warps per kv head, 4 resident blocks of 52224 B, 528 / 8 = 66 wanted', () => {
      // 4k: at most 256 / 8 = 32 splits
      expect(plan({ contextTokens: 4096, uniformPrecision: 'int4' })).toMatchObject({ kernel: 'mma-int4', stages: 6, headWarps: false, warpsPerBlock: 4, grid: [32, 8], dynamicSmemBytes: 52224, residentBlocks: 4, splits: 32 });
      // 16368 tokens = 1023 chunks: 66 splits, ceil(1023 / 264) = 4 chunks per warp -> ceil(1023 / 16) = 64 splits
      expect(plan({ contextTokens: 16368, uniformPrecision: 'int4' })).toMatchObject({ headWarps: false, splits: 64, chunksPerWarp: 4 });
    });
    it('from 1024 chunks with 8 kv heads: one warp per kv head, 8 x 6 x 2176 = 104448 B, 1 resident block (the 16 KiB static q operand)', () => {
      // 16384 tokens: 132 blocks of one split each, ceil(1024 / 132) = 8 chunks per warp -> 128 splits
      expect(plan({ contextTokens: 16384, uniformPrecision: 'int4' })).toMatchObject({ kernel: 'mma-int4', headWarps: true, warpsPerBlock: 8, grid: [128, 1], dynamicSmemBytes: 104448, residentBlocks: 1, splits: 128, chunksPerWarp: 8 });
      // 32k: 16 chunks per warp -> 128 splits; 128k: 63 per warp -> ceil(8192 / 63) = 131
      expect(plan({ contextTokens: 32768, uniformPrecision: 'int4' })).toMatchObject({ headWarps: true, splits: 128, chunksPerWarp: 16 });
      expect(plan({ contextTokens: 131072, uniformPrecision: 'int4' })).toMatchObject({ headWarps: true, splits: 131, chunksPerWarp: 63 });
    });
    it('head warps with 4 and 6 kv heads at 32k (the static arrays are sized for 8 warps)', () => {
      // 4 kv heads: 52224 + 20116 + 1024 B -> 3 blocks, 396 splits wanted, 6 chunks per warp -> ceil(2048 / 6) = 342
      expect(plan({ qHeads: 16, kvHeads: 4, contextTokens: 32768, uniformPrecision: 'int4' })).toMatchObject({ headWarps: true, warpsPerBlock: 4, grid: [342, 1], residentBlocks: 3, splits: 342, chunksPerWarp: 6 });
      // 6 kv heads: 78336 + 20116 + 1024 B -> 2 blocks, 264 wanted, 8 chunks per warp -> 256
      expect(plan({ qHeads: 24, kvHeads: 6, contextTokens: 32768, uniformPrecision: 'int4' })).toMatchObject({ headWarps: true, warpsPerBlock: 6, dynamicSmemBytes: 78336, residentBlocks: 2, splits: 256 });
    });
    it('no head warps with fewer than 4 or more than 8 kv heads, or with the option off', () => {
      // 2 kv heads: 528 / 2 = 264 wanted, at most 2048 / 8 = 256, 2 chunks per warp
      expect(plan({ qHeads: 8, kvHeads: 2, contextTokens: 32768, uniformPrecision: 'int4' })).toMatchObject({ headWarps: false, grid: [256, 2], splits: 256, chunksPerWarp: 2 });
      expect(plan({ qHeads: 64, kvHeads: 16, contextTokens: 32768, uniformPrecision: 'int4' })).toMatchObject({ kernel: 'mma-int4', headWarps: false, grid: [32, 16] });
      // off at 32k: 66 wanted, 8 chunks per warp -> 2048 / 32 = 64 splits
      expect(plan({ contextTokens: 32768, uniformPrecision: 'int4' }, { int4_head_warps: 'off' })).toMatchObject({ headWarps: false, grid: [64, 8], splits: 64, chunksPerWarp: 8 });
    });
    it('int4_stages sets the ring: 8 stages keep head warps (139264 B <= 200 KiB), 4 stages give 5 resident 4-warp blocks', () => {
      expect(plan({ contextTokens: 32768, uniformPrecision: 'int4' }, { int4_stages: 8 })).toMatchObject({ stages: 8, headWarps: true, dynamicSmemBytes: 139264 });
      expect(plan({ contextTokens: 4096, uniformPrecision: 'int4' }, { int4_stages: 4 })).toMatchObject({ stages: 4, headWarps: false, dynamicSmemBytes: 34816, residentBlocks: 5 });
    });
    it('only at group size 128 and at most 4 query heads per kv head; the rest run v3', () => {
      expect(plan({ contextTokens: 4096, groupSize: 64, uniformPrecision: 'int4' }).kernel).toBe('v3');
      expect(plan({ qHeads: 64, kvHeads: 8, contextTokens: 4096, uniformPrecision: 'int4' })).toMatchObject({ kernel: 'v3', queryHeadsPerWarp: 8 });
    });
  });

  describe('mixed tables, other precisions, other shapes: v3', () => {
    it('no promise at 32k: 3 stages of 8 KiB per warp, 2 resident blocks, 32 splits, bulk copies at D 128', () => {
      expect(plan({ contextTokens: 32768 })).toEqual({
        kernel: 'v3', stages: 3, headWarps: false, queryHeadsPerWarp: 4, warpsPerBlock: 4, grid: [32, 8], dynamicSmemBytes: 98304,
        bulkCopy: true, earlyChunks: 2, kvExceedsL2: false, l2Policy: 'normal', residentBlocks: 2, splits: 32, chunksPerWarp: 16,
        reduce: 'split', pdlReduce: true,
      });
    });
    it('uniform INT8, INT3 and INT2 have no tensor-core kernel', () => {
      expect(plan({ contextTokens: 4096, uniformPrecision: 'int8' }).kernel).toBe('v3');
      expect(plan({ contextTokens: 4096, uniformPrecision: 'int3' }).kernel).toBe('v3');
      expect(plan({ contextTokens: 4096, uniformPrecision: 'int2' }).kernel).toBe('v3');
    });
    it('head dim 64, one query head per kv head: lane copies, 4 x 3 x 4096 = 49152 B, 4 resident blocks', () => {
      // 8 kv heads at 4k: 528 / 8 = 66 wanted, at most 32
      expect(plan({ qHeads: 8, kvHeads: 8, headDim: 64, groupSize: 64, contextTokens: 4096, uniformPrecision: 'fp16' })).toMatchObject({
        kernel: 'v3', bulkCopy: false, queryHeadsPerWarp: 1, dynamicSmemBytes: 49152, residentBlocks: 4, splits: 32,
      });
    });
    it('3 query heads per kv head run with 4 per warp', () => {
      expect(plan({ qHeads: 12, kvHeads: 4, contextTokens: 4096 })).toMatchObject({ kernel: 'v3', queryHeadsPerWarp: 4 });
    });
  });

  describe('odd contexts and split counts', () => {
    it('one token: one split, the kernel writes the output, no reduce', () => {
      expect(plan({ contextTokens: 1, uniformPrecision: 'fp16' })).toMatchObject({ splits: 1, grid: [1, 8], chunksPerWarp: 1, reduce: 'none', pdlReduce: false });
      expect(plan({ contextTokens: 17 })).toMatchObject({ splits: 1, chunksPerWarp: 1, reduce: 'none' });
    });
    it('4099 tokens (257 chunks): 32 splits allowed, 3 chunks per warp, ceil(257 / 12) = 22 splits', () => {
      expect(plan({ contextTokens: 4099, uniformPrecision: 'fp16' })).toMatchObject({ splits: 22, chunksPerWarp: 3 });
    });
    it('a call\'s own splits come first, then the option\'s; never more splits than chunks', () => {
      expect(plan({ contextTokens: 32768, uniformPrecision: 'fp16', splits: 7 }, { splits: 40 })).toMatchObject({ splits: 7, grid: [7, 8], chunksPerWarp: 74 });
      expect(plan({ contextTokens: 32768, uniformPrecision: 'fp16' }, { splits: 40 })).toMatchObject({ splits: 40 });
      expect(plan({ contextTokens: 100 }, { splits: 64 })).toMatchObject({ splits: 7, chunksPerWarp: 1 });
      expect(plan({ contextTokens: 100, splits: 1 })).toMatchObject({ splits: 1, reduce: 'none' });
    });
  });

  describe('options', () => {
    it('tensor_cores picks which uniform tables run on the tensor cores', () => {
      const kernels = (tc: string) => [plan({ contextTokens: 4096, uniformPrecision: 'fp16' }, { tensor_cores: tc }).kernel, plan({ contextTokens: 4096, uniformPrecision: 'int4' }, { tensor_cores: tc }).kernel];
      expect(kernels('on')).toEqual(['mma-fp16', 'mma-int4']);
      expect(kernels('off')).toEqual(['v3', 'v3']);
      expect(kernels('int4')).toEqual(['v3', 'mma-int4']);
      expect(kernels('fp16')).toEqual(['mma-fp16', 'v3']);
    });
    it('the FP16 kernel\'s early chunks, L2 policy, stages and head warps', () => {
      expect(plan({ contextTokens: 4096, uniformPrecision: 'fp16' }, { fp16_early_chunks: 2, fp16_l2_policy: 'evict-first' })).toMatchObject({ earlyChunks: 2, l2Policy: 'evict-first' });
      expect(plan({ contextTokens: 32768, uniformPrecision: 'fp16' }, { fp16_l2_policy: 'normal' })).toMatchObject({ earlyChunks: 2, l2Policy: 'normal' });
      // 2 stages leave room for 1 early chunk only
      expect(plan({ contextTokens: 32768, uniformPrecision: 'fp16' }, { fp16_stages: 2 })).toMatchObject({ stages: 2, earlyChunks: 1, dynamicSmemBytes: 65536 });
      // head warps: 8 x 3 x 8 KiB = 196608 B <= 200 KiB, one resident block, 132 wanted -> 256 / 2 = 128 splits at 4k
      expect(plan({ contextTokens: 4096, uniformPrecision: 'fp16' }, { fp16_head_warps: 'on' })).toMatchObject({ headWarps: true, warpsPerBlock: 8, grid: [128, 1], dynamicSmemBytes: 196608, residentBlocks: 1, splits: 128 });
      // ... but not at 4 stages (256 KiB)
      expect(plan({ contextTokens: 4096, uniformPrecision: 'fp16' }, { fp16_head_warps: 'on', fp16_stages: 4 })).toMatchObject({ headWarps: false, stages: 4 });
    });
    it('every option resolves to its default, as the table states it', () => {
      const table = addon().attentionOptionTable();
      const resolved = resolveAttentionOptions();
      expect(Object.keys(resolved)).toEqual(table.map((r) => r.name));
      expect(resolved).toEqual({ tensor_cores: 'on', splits: 'auto', int4_stages: 6, fp16_stages: 3, int4_head_warps: 'on', fp16_head_warps: 'off', fp16_early_chunks: 'auto', fp16_l2_policy: 'auto' });
      for (const r of table) expect(String(resolved[r.name])).toBe(r.default);
      expect(resolveAttentionOptions({ int4_head_warps: false, splits: 12, fp16_stages: '4', fp16_early_chunks: 3 })).toMatchObject({ int4_head_warps: 'off', splits: 12, fp16_stages: 4, fp16_early_chunks: 3 });
      expect(formatAttentionOptions()).toMatch(/^ {2}tensor_cores=on, off, int4, fp16 {2}\(default on\)$/m);
    });
    it('refuses a bad option, naming it and its valid values', () => {
      expect(() => resolveAttentionOptions({ tensor_cores: 'maybe' })).toThrow('attention option tensor_cores: expected on, off, int4, fp16 but received "maybe"');
      expect(() => resolveAttentionOptions({ stages: 3 })).toThrow('unknown attention option "stages": expected one of tensor_cores, splits, int4_stages, fp16_stages, int4_head_warps, fp16_head_warps, fp16_early_chunks, fp16_l2_policy');
      expect(() => resolveAttentionOptions({ int4_stages: 5 })).toThrow('attention option int4_stages: expected 4, 6, 8 but received "5"');
      expect(() => resolveAttentionOptions({ splits: 0 })).toThrow('attention option splits: expected auto or 1 to 65535 but received "0"');
      expect(() => resolveAttentionOptions({ splits: 2.5 })).toThrow(/attention option splits: expected auto or 1 to 65535 but received "2\.5/);
      expect(() => resolveAttentionOptions({ int4_head_warps: 'yes' })).toThrow('attention option int4_head_warps: expected on, off but received "yes"');
      expect(() => resolveAttentionOptions({ fp16_early_chunks: 3 })).toThrow('attention option fp16_early_chunks: expected auto or 1 to 2 (fp16_stages - 1) but received "3"');
      expect(resolveAttentionOptions({ fp16_early_chunks: 3, fp16_stages: 4 }).fp16_early_chunks).toBe(3);
      expect(() => plan({ contextTokens: 4096 }, { fp16_l2_policy: 'first' })).toThrow('attention option fp16_l2_policy: expected auto, evict-first, normal but received "first"');
      // a backend refuses them before it opens
      expect(() => openBackend('host', 0, { tensor_cores: 'int8' })).toThrow('attention option tensor_cores: expected on, off, int4, fp16 but received "int8"');
      // and the shape as the launch would
      expect(() => plan({ contextTokens: 4096, headDim: 96 })).toThrow('Expected 64, 128 or 256 for headDim but received 96');
    });
    it('--attn KEY=VALUE flags collect into one options object', () => {
      expect(attnFlag('fp16_stages=4', attnFlag('tensor_cores=off'))).toEqual({ tensor_cores: 'off', fp16_stages: '4' });
      expect(() => attnFlag('tensor_cores')).toThrow('--attn: expected KEY=VALUE (e.g. tensor_cores=off), got "tensor_cores"');
      expect(() => attnFlag('=off')).toThrow(/expected KEY=VALUE/);
      expect(() => attnFlag('tensor_cores=on', { tensor_cores: 'off' })).toThrow('--attn: tensor_cores given twice ("off" and "on")');
    });
  });

  describe('what a run records', () => {
    it('the host backend keeps its options and plans its CPU loop', () => {
      const b = openBackend('host', 0, { tensor_cores: 'off', int4_stages: 8 });
      try {
        expect(b.attentionOptions()).toMatchObject({ tensor_cores: 'off', int4_stages: 8, fp16_stages: 3 });
        expect(b.attentionPlan({ ...LLAMA, contextTokens: 100, uniformPrecision: 'int4' })).toMatchObject({ kernel: 'host', splits: 1, chunksPerWarp: 7, reduce: 'none' });
      } finally {
        b.close();
      }
    });
    it('attentionKernels groups a run\'s launches per table precision by kernel configuration', () => {
      const shape = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128 };
      const attn = (uniform: number, tokens: number) => ({ o: 'attn' as const, layer: 0, tableOff: 0, tokens, uniform });
      const steps = [
        { ops: [attn(16, 4096), attn(16, 4096), attn(4, 4096), attn(0, 4096)] },
        { ops: [attn(16, 40000), attn(4, 40000), attn(0, 40000)] },
      ] as unknown as LowStep[];
      const planner = { attentionPlan: (s: AttentionCallShape) => addon().attentionPlan(s, {}, H100) };
      expect(attentionKernels(planner, steps, shape)).toEqual({
        // 40000 tokens = 2500 chunks: 33 wanted, ceil(2500 / 132) = 19 per warp -> ceil(2500 / 76) = 33 splits
        fp16: [
          { kernel: 'mma-fp16', stages: 3, head_warps: false, early_chunks: 1, l2_policy: 'normal', launches: 2, context_tokens: [4096, 4096], splits: [32, 32] },
          { kernel: 'mma-fp16', stages: 3, head_warps: false, early_chunks: 2, l2_policy: 'evict-first', launches: 1, context_tokens: [40000, 40000], splits: [33, 33] },
        ],
        // head warps at 2500 chunks: ceil(2500 / 132) = 19 per warp -> ceil(2500 / 19) = 132 splits
        int4: [
          { kernel: 'mma-int4', stages: 6, head_warps: false, early_chunks: 1, l2_policy: 'normal', launches: 1, context_tokens: [4096, 4096], splits: [32, 32] },
          { kernel: 'mma-int4', stages: 6, head_warps: true, early_chunks: 1, l2_policy: 'normal', launches: 1, context_tokens: [40000, 40000], splits: [132, 132] },
        ],
        mixed: [{ kernel: 'v3', stages: 3, head_warps: false, early_chunks: 2, l2_policy: 'normal', launches: 2, context_tokens: [4096, 40000], splits: [32, 33] }],
      });
    });
    it('hil run writes the options used and the kernels run into hil.json\'s attention', async () => {
      const fx = makeHilFixture(64, 4);
      try {
        const config = { trace: fx.trace, policy: 'full', policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 };
        const x = await hilRun(config, { backend: 'host', nvmeDir: fx.dir, attention: { tensor_cores: 'off', fp16_stages: 4 } });
        expect(x.hil.attention.options).toMatchObject({ tensor_cores: 'off', fp16_stages: 4, int4_stages: 6 });
        // the fixture model has 2 layers; 4 steps of uniform FP16 tables, all on the host's loop
        const fp16 = x.hil.attention.kernels.fp16!;
        expect(fp16).toHaveLength(1);
        expect(fp16[0]).toMatchObject({ kernel: 'host', launches: x.hil.attention_tables.fp16 });
        expect(x.hil.attention_tables.fp16).toBe(8);
        await expect(hilRun(config, { backend: 'host', nvmeDir: fx.dir, attention: { fp16_stages: 5 } })).rejects.toThrow('attention option fp16_stages: expected 2, 3, 4, 6 but received "5"');
      } finally {
        rmSync(fx.dir, { recursive: true, force: true });
      }
    });
  });
});
