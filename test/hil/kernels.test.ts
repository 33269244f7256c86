// The kernels of each backend against the float64 references (hil/reference), over
// randomized odd sizes. Host: always. CUDA: only where a GPU is present, with the reason shown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import { openBackend } from '../../hil/backend.js';
import { packCache } from '../../hil/block-pack.js';
import { encodeBlockTable } from '../../hil/kv-format.js';
import { geometryOf } from '../../hil/reference/paged-attention.js';
import {
  ATTENTION_CASES,
  BAD_ENTRY_CASES,
  attentionInputs,
  GEMV_CASES,
  HADAMARD_CASES,
  QUANT_CASES,
  checkAttention,
  checkBadEntry,
  checkGemv,
  checkHadamard,
  checkQuantize,
} from '../../hil/checks/kernel-checks.js';
import { backendAvailability } from './availability.js';

/**
 * The INT4 head-warp cases (16k to 20k tokens: a mode of the cuda kernel) run on the cuda backend
 * only: the host backend has one loop for every shape, and runs a context over 1,024 blocks in the
 * FP16 one-split case of 16,390 tokens.
 */
const CUDA_ONLY_SEEDS = new Set([49, 50, 65]);

for (const kind of ['host', 'cuda'] as const) {
  const avail = backendAvailability(kind);
  const attentionCases = kind === 'host' ? ATTENTION_CASES.filter((c) => !CUDA_ONLY_SEEDS.has(c.seed)) : ATTENTION_CASES;
  describe.skipIf(!avail.available)(`${kind} kernels${avail.available ? '' : ` — skipped: ${avail.reason}`}`, () => {
    let b: NativeBackend;
    beforeAll(() => {
      b = openBackend(kind);
    });
    afterAll(() => b?.close());

    it.each(QUANT_CASES)('quantize/dequantize bit-exact: int$bits G=$groupSize groups=$groups', async (c) => {
      const r = await checkQuantize(b, c);
      expect(r.ok, `${r.name}: ${r.detail}`).toBe(true);
    });
    it.each(HADAMARD_CASES)('hadamard $dtype rows=$rows n=$n', async (c) => {
      const r = await checkHadamard(b, c);
      expect(r.ok, `${r.name}: ${r.detail}`).toBe(true);
    });
    it.each(attentionCases)('paged attention L=$contextTokens q$qHeads/kv$kvHeads D=$headDim', async (c) => {
      const r = await checkAttention(b, c);
      expect(r.ok, `${r.name}: ${r.detail}`).toBe(true);
    });
    it.each(BAD_ENTRY_CASES)('a bad block-table entry is refused or makes every output NaN: block $badBlock, $precision, splits $splits', async (c) => {
      const r = await checkBadEntry(b, c);
      expect(r.ok, `${r.name}: ${r.detail}`).toBe(true);
      // the host backend reads every table, so it refuses the entry by name
      if (kind === 'host') expect(r.detail).toMatch(new RegExp(`refused: .*block table entry ${c.badBlock}: block outside the arena`));
    });
    it('checks a uniformPrecision promise where the table is host-readable', async () => {
      const c = ATTENTION_CASES.find((x) => x.seed === 26)!; // int2/int8 blocks: a mixed table
      const { k, v, q } = attentionInputs(c);
      const mixed = packCache(geometryOf(c), c.contextTokens, k, v, Array(Math.ceil(c.contextTokens / c.blockTokens)).fill(0).map((_, i) => (i % 2 ? 'int8' : 'int2')));
      const table = encodeBlockTable(mixed.table);
      const ids = [b.alloc('device', mixed.arena.byteLength), b.alloc(kind === 'host' ? 'device' : 'pinned', table.byteLength), b.alloc('device', q.byteLength), b.alloc('device', q.byteLength)];
      try {
        b.write(ids[0]!, 0, mixed.arena);
        b.write(ids[1]!, 0, table);
        b.write(ids[2]!, 0, q);
        const op = { ...c, arena: ids[0]!, table: ids[1]!, q: ids[2]!, out: ids[3]! };
        expect(() => b.attention('compute', { ...op, uniformPrecision: 'int5' as never })).toThrow(/uniformPrecision/);
        const run = async () => {
          b.attention('compute', { ...op, uniformPrecision: 'int4' });
          await b.synchronize();
        };
        await expect(run()).rejects.toThrow(/uniformPrecision promise/);
      } finally {
        for (const id of ids) b.free(id);
      }
    });
    it.each(GEMV_CASES)('gemv $rows x $cols', async (c) => {
      const r = await checkGemv(b, c);
      expect(r.ok, `${r.name}: ${r.detail}`).toBe(true);
    });
  });
}
