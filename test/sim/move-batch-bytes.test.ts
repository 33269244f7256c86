/**
 * The bytes of a move batch: the driver sums them once per batch at its flush (a product where the
 * sum of equal integers is exact); every batch the executor is handed carries, for its source and its
 * destination, the sum block by block of each block's bytes at the batch's precisions, over replays
 * of policies that promote, demote and requantize.
 */
import { describe, expect, it } from 'vitest';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import type { MoveBatch } from '../../sim/executor.js';
import { bytesOfBatch } from '../../sim/replay-driver.js';
import { simulate } from '../../sim/run.js';
import { makeHilFixture } from '../hil/hil-fixtures.js';

describe('move batch bytes', () => {
  it('equal n additions of the bytes from 0, integer or not', () => {
    for (const bytes of [0, 1, 4096, 69632, 2 ** 40 + 3, 2 ** 50 + 1, 0.1, 1 / 3, 2560.5, 1e-7]) {
      for (const n of [0, 1, 2, 3, 7, 100, 1013]) {
        let sum = 0;
        for (let j = 0; j < n; j++) sum += bytes;
        expect(bytesOfBatch(n, bytes)).toBe(sum);
      }
    }
  });

  it('are the block-by-block sums of every batch handed to the executor', () => {
    const fx = makeHilFixture(512, 16);
    let batches = 0;
    let quantized = 0;
    for (const policy of ['quest', 'lru-offload', 'uniform-int8', 'smartkv', 'kivi']) {
      for (const budget of ['5%', '25%']) {
        simulate({ trace: fx.trace, policy, model: fx.model, hardware: 'h100-pcie5', hbm_budget: budget, group_size: 64 }, {
          executor: (resolved, cache) => {
            const rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware));
            const move = rec.move.bind(rec);
            rec.move = (b: MoveBatch) => {
              let from = 0;
              let to = 0;
              for (let j = 0; j < b.blocks.length; j++) {
                from += cache.bytesOf(b.fromBits);
                to += cache.bytesOf(b.toBits);
              }
              expect(b.bytesFrom).toBe(from);
              expect(b.bytesTo).toBe(to);
              batches++;
              if (b.fromBits !== b.toBits) quantized++;
              return move(b);
            };
            return rec;
          },
        });
      }
    }
    expect(batches).toBeGreaterThan(100);
    expect(quantized).toBeGreaterThan(0);
  });
});
