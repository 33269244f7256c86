// Moves between host tiers that change a block's bits are converted on the host: the conversion is
// bit-exact with what verification expects of a block converted between those widths (a
// dequantization and a quantization with the kernels' arithmetic), and synapsevm's DRAM -> NVMe
// demotions at fewer bits lower to host conversions between the file reads and writes.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockData } from '../../hil/executor/block-data.js';
import { convertBlock } from '../../hil/executor/host-convert.js';
import { expectedBlock } from '../../hil/executor/expected-block.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import type { LoweredPlan } from '../../hil/executor/lowered-plan.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { blockBytes } from '../../hil/kv-format.js';
import { simulate } from '../../sim/run.js';
import { makeHilFixture } from './hil-fixtures.js';

const fx = makeHilFixture(512, 4);
afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));

describe('host conversion of a block between widths', () => {
  it('gives the bytes verification expects, for every pair of widths', () => {
    for (const g of [{ kvHeads: 2, blockTokens: 16, headDim: 64, groupSize: 64 }, { kvHeads: 1, blockTokens: 16, headDim: 128, groupSize: 128 }]) {
      const p = { geometry: g, rotation: false } as unknown as LoweredPlan;
      const data = new BlockData(7, blockBytes(g, 'fp16') / 2);
      for (const from of [16, 8, 4, 3, 2]) {
        for (const to of [16, 8, 4, 3, 2]) {
          if (from === to) continue;
          const src = expectedBlock(p, data, 1, 5, from);
          const want = expectedBlock(p, data, 1, 5, to, from === 16 ? [] : [from]);
          expect(Buffer.from(convertBlock(g, from, to, src)).equals(Buffer.from(want)), `${from} -> ${to}`).toBe(true);
        }
      }
      // a narrower width loses what a direct quantization keeps: 8 -> 2 differs from 16 -> 2
      const direct = expectedBlock(p, data, 1, 5, 2);
      expect(Buffer.from(convertBlock(g, 8, 2, expectedBlock(p, data, 1, 5, 8))).equals(Buffer.from(direct))).toBe(false);
    }
  });

  it('synapsevm: a DRAM -> NVMe demotion at fewer bits is a host conversion in the block\'s DRAM slot, followed by its file write', () => {
    let rec: PlanRecorder | undefined;
    const r = simulate({ trace: fx.trace, policy: 'synapsevm', policy_options: {}, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 }, {
      executor: (resolved, cache) => (rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware))),
    });
    const p = lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 256 << 10, groupSize: 64 });
    const ops = p.steps.flatMap((s) => s.ops);
    const conv = ops.flatMap((o, i) => (o.o === 'hostConvert' ? [i] : []));
    expect(conv.length).toBeGreaterThan(0);
    for (const i of conv) {
      const o = ops[i];
      if (o.o !== 'hostConvert') continue;
      expect([o.src, o.dst, o.fromBits, o.toBits]).toEqual(['dram', 'dram', 4, 2]);
      // the file write of the converted block follows, from the same slot
      const w = ops.slice(i + 1).find((x) => x.o === 'fileWrite');
      expect(w && w.o === 'fileWrite' && w.offset <= o.dstOff && o.dstOff < w.offset + w.bytes).toBe(true);
    }
  });
});
