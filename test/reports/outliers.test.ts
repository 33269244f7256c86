import { describe, expect, it } from 'vitest';
import { findOutliers, linkName, outlierSentence, worstPerPolicy, type OutlierInput } from '../../reports/outliers.js';

const p = (policy: string, budget: number, tbt: number, over: Partial<OutlierInput> = {}): OutlierInput => ({
  panel: 'trace · h100',
  policy,
  budget,
  tbt_p50_ms: tbt,
  ...over,
});

describe('findOutliers', () => {
  it('flags a policy above 3x the median of its budget group (hand-computed medians)', () => {
    const pts = [
      p('h2o', 0.1, 5), p('quest', 0.1, 6), p('lru', 0.1, 16), p('synapsevm', 0.1, 300), // median (6 + 16) / 2 = 11
      p('h2o', 0.2, 5), p('quest', 0.2, 6), p('lru', 0.2, 18.1), // median 6: 18.1 > 18
      p('h2o', 0.4, 5), p('lru', 0.4, 100), // only two policies: no median to compare with
    ];
    const out = findOutliers(pts);
    expect(out.map((o) => [o.point.policy, o.point.budget, o.median_ms, o.ratio])).toEqual([
      ['synapsevm', 0.1, 11, 300 / 11],
      ['lru', 0.2, 6, 18.1 / 6],
    ]);
    expect(findOutliers(pts, 20).map((o) => o.point.policy)).toEqual(['synapsevm']);
  });

  it('keeps one entry per policy: its largest ratio and a count of the rest', () => {
    const pts = [p('a', 0.1, 1), p('b', 0.1, 1), p('s', 0.1, 10), p('a', 0.2, 1), p('b', 0.2, 1), p('s', 0.2, 40)];
    const w = worstPerPolicy(findOutliers(pts));
    expect(w.map((x) => [x.worst.point.budget, x.worst.ratio, x.others])).toEqual([[0.2, 40, 1]]);
  });
});

describe('outlierSentence', () => {
  it('says where the step time goes, from the run breakdown', () => {
    const [o] = findOutliers([
      p('h2o', 0.1, 5.5),
      p('quest', 0.1, 5.6),
      p('synapsevm', 0.1, 274, {
        breakdown: {
          steps: 128,
          compute_ms: 700,
          stall_ms: 34300, // 98% of 35,000
          transfer_ms: 38400, // 300 ms per step
          bytes: { 'pcie:dram->hbm': 6 * 2 ** 30, 'nvme:nvme->dram': 4 * 2 ** 30, 'pcie:hbm->dram': 0 },
        },
      }),
    ]);
    // median 5.6: 274 / 5.6 = 48.93
    expect(outlierSentence(o!, 2)).toBe(
      '**synapsevm** at 10% HBM (trace · h100): 274 ms per token, 49× the median policy (5.60 ms); more than 3× at 2 other points too. ' +
        '98% of its step time is waiting for memory (compute 2%); the memory streams were busy 300 ms per step, ' +
        'moving 10.0 GiB in all, 60% dram→hbm over pcie and 40% nvme→dram over nvme.',
    );
  });

  it('says so when the run has no breakdown', () => {
    const [o] = findOutliers([p('a', 0.5, 1), p('b', 0.5, 1), p('c', 0.5, 4)]);
    expect(outlierSentence(o!)).toBe(
      "**c** at 50% HBM (trace · h100): 4 ms per token, 4.0× the median policy (1 ms). The run's time breakdown is not available.",
    );
    expect(linkName('odd')).toBe('odd');
  });
});
