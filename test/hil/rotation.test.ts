// RotateKV on real bytes: the executor's float reference of the block rotation is bit-exact with the
// backend's Hadamard kernel (so a rotated block can be verified), and a policy that asks for rotation
// gets its new blocks rotated by the kernel as they are stored, q and the output rotated per layer,
// and every block verified rotated.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openBackend } from '../../hil/backend.js';
import { hilRun } from '../../hil/executor/hil-run.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { rotateHalves } from '../../hil/executor/rotate-ref.js';
import { floatToHalf, halfToFloat } from '../../hil/half.js';
import { hadamardRef } from '../../hil/reference/hadamard.js';
import { makeRng } from '../../hil/rng.js';
import { simulate } from '../../sim/run.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');
const cuda = backendAvailability('cuda');
const fx = makeHilFixture(256, 20);
afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

function randomHalves(n: number, seed: number): Uint16Array {
  const rng = makeRng(seed);
  return Uint16Array.from({ length: n }, () => floatToHalf((rng.next() - 0.5) * 4));
}

describe('rotation reference', () => {
  it('is the orthonormal Walsh-Hadamard transform (float64 reference within FP16 rounding) and its own inverse', () => {
    for (const n of [64, 128]) {
      const v = randomHalves(n * 6, n);
      const r = rotateHalves(v, n);
      const ref = hadamardRef(Array.from(v, halfToFloat), 6, n);
      for (let i = 0; i < v.length; i++) expect(Math.abs(halfToFloat(r[i]) - ref[i])).toBeLessThanOrEqual(Math.abs(ref[i]) * 2 ** -10 + 1e-3);
      const back = rotateHalves(r, n);
      for (let i = 0; i < v.length; i++) expect(Math.abs(halfToFloat(back[i]) - halfToFloat(v[i]))).toBeLessThan(0.01);
    }
  });
});

for (const [kind, a] of [['host', host], ['cuda', cuda]] as const) {
  describe.skipIf(!a.available)(`rotation on the ${kind} backend${a.available ? '' : ` (skipped: ${a.reason})`}`, () => {
    it('the block rotation reference matches the Hadamard kernel bit for bit', async () => {
      const b = openBackend(kind);
      try {
        for (const [rows, n] of [[2 * 2 * 16, 64], [3, 128], [1, 256]]) {
          const v = randomHalves(rows * n, rows + n);
          const r = b.alloc('device', v.byteLength);
          b.write(r, 0, v);
          b.hadamard('compute', { data: r, rows, n, dtype: 'f16' });
          await b.synchronize();
          expect(Buffer.from(b.read(r, 0, v.byteLength)).equals(Buffer.from(rotateHalves(v, n).buffer))).toBe(true);
          b.free(r);
        }
      } finally {
        b.close();
      }
    });

    it('ntransformer (RotateKV on): rotated blocks verified, new ones rotated by the kernel, q and output rotated per layer', async () => {
      const cfg = { trace: fx.trace, policy: 'ntransformer', policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 };
      const x = await hilRun(cfg, { backend: kind, nvmeDir: fx.dir, verify: true });
      expect(x.hil.rotation).toBe(true);
      expect(x.hil.verify).toMatchObject({ mismatches: 0 });
      const off = await hilRun({ ...cfg, policy_options: { rotation: 'false' } }, { backend: kind, nvmeDir: fx.dir, verify: true });
      expect(off.hil.rotation).toBe(false);
      expect(off.hil.verify).toMatchObject({ mismatches: 0 });
    });
  });
}

describe('rotation, lowered', () => {
  it('per layer: q rotated before the attention and the output after it; each block created in HBM rotated after its append', () => {
    let rec: PlanRecorder | undefined;
    const r = simulate({ trace: fx.trace, policy: 'full', policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 }, {
      executor: (resolved, cache) => (rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware))),
    });
    const p = lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 256 << 10, groupSize: 64, rotation: true });
    expect(p.rotation).toBe(true);
    const ops = p.steps.flatMap((s) => s.ops).filter((o) => o.o === 'rotate' || o.o === 'attn' || (o.o === 'copy' && o.src === 'fresh'));
    const seq = ops.map((o) => (o.o === 'rotate' ? `rotate ${o.what}` : o.o === 'attn' ? 'attn' : 'append'));
    // 20 steps x 2 layers; 256 prompt tokens + 20: two new blocks per layer (at tokens 256 and 272)
    expect(seq.filter((x) => x === 'attn').length).toBe(40);
    expect(seq.join(' ').split('rotate q attn rotate out').length - 1).toBe(40);
    expect(seq.join(' ').split('append rotate block').length - 1).toBe(4);
    expect(seq.filter((x) => x === 'append').length).toBe(4);
    const plain = lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 256 << 10, groupSize: 64 });
    expect(plain.steps.flatMap((s) => s.ops).some((o) => o.o === 'rotate')).toBe(false);
  });
});
