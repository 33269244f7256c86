// cells.csv's hw_link_h2d_GBps: the slowest H2D rate the host link ran at right before the cell's runs
// (HilInfo.link_before, cuda), empty where the runs did not measure it (host backend, cells stored before).
import { describe, expect, it } from 'vitest';
import { cellsCsv, type ValidateResult } from '../../hil/validate/validate.js';

describe('the link rate before the runs in cells.csv', () => {
  it('writes the slowest run H2D rate, or nothing', () => {
    const cell = (id: string, link?: [number, number][]) => ({ id, trace: 't', trace_kind: 'generated', prompt_tokens: 8192, model: 'm', label: 'lru-offload', budget: '10%', status: 'ok', ...(link ? { hw_link_GBps: link } : {}) });
    const r = { grid: { skip_steps: 1 }, cells: [cell('a', [[54.31, 55.02], [52.904, 55.1]]), cell('b')] } as unknown as ValidateResult;
    const lines = cellsCsv(r).trim().split('\n');
    const col = lines[0].split(',').indexOf('hw_link_h2d_GBps');
    expect(col).toBeGreaterThan(0);
    expect(lines[1].split(',')[col]).toBe('52.90');
    expect(lines[2].split(',')[col]).toBe('');
  });
});
