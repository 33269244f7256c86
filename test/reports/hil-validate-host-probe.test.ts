import { describe, expect, it } from 'vitest';
import { HOST_PACE_CHANGE, hostProbeSummary } from '../../reports/hil-validate-report.js';

describe('the validate report: host issue probes', () => {
  it('says nothing where no cell has probes', () => {
    expect(hostProbeSummary([])).toBe('');
    expect(hostProbeSummary([{}, { hw_host_probe_us: [] }])).toBe('');
  });

  it('gives the range over every run and counts the cells whose runs met paces the threshold apart', () => {
    expect(HOST_PACE_CHANGE).toBe(1.3);
    // 2.6 / 2.0 = 1.3 exactly: a change; 2.59 / 2.0 < 1.3: not; a cell without probes is left out of the count
    const s = hostProbeSummary([{ hw_host_probe_us: [2.0, 2.6] }, { hw_host_probe_us: [2.0, 2.59] }, {}, { hw_host_probe_us: [1.7, 4.03, 3.0] }]);
    expect(s).toBe("The host's issue pace, probed right before each run: 1.70-4.03 us per copy over 7 runs; in 2 of 3 cells the runs met paces 1.3x or more apart (a step that waits on the host follows that pace).");
  });
});
