// The kernels of each backend against the float64 references (hil/reference), over
// randomized odd sizes. Host: always. CUDA: only where a GPU is present, with the reason shown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import { openBackend } from '../../hil/backend.js';
import {
  ATTENTION_CASES,
  GEMV_CASES,
  HADAMARD_CASES,
  QUANT_CASES,
  checkAttention,
  checkGemv,
  checkHadamard,
  checkQuantize,
} from '../../hil/checks/kernel-checks.js';
import { backendAvailability } from './availability.js';

for (const kind of ['host', 'cuda'] as const) {
  const avail = backendAvailability(kind);
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
    it.each(ATTENTION_CASES)('paged attention L=$contextTokens q$qHeads/kv$kvHeads D=$headDim', async (c) => {
      const r = await checkAttention(b, c);
      expect(r.ok, `${r.name}: ${r.detail}`).toBe(true);
    });
    it.each(GEMV_CASES)('gemv $rows x $cols', async (c) => {
      const r = await checkGemv(b, c);
      expect(r.ok, `${r.name}: ${r.detail}`).toBe(true);
    });
  });
}
