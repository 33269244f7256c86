import { describe, expect, it } from 'vitest';
import { overloadMarkdown } from '../../reports/serving-run-report.js';
import type { ServeSummary } from '../../serving/serve-summary.js';
import type { ServeOverload } from '../../serving/overload.js';

const summary = (overload: ServeOverload) => ({ overload }) as ServeSummary;

describe('the serving report\'s overload section', () => {
  it('is empty for a run that was not overloaded', () => {
    expect(overloadMarkdown(summary({ overloaded: false, reasons: [], offered_tokens_per_s: 10, capacity_tokens_per_s: 20, load: 0.5, time_scale_for_capacity: null, advice: [] }))).toBe('');
  });

  it('states the reasons, offered load against capacity and the advice', () => {
    const text = overloadMarkdown(
      summary({
        overloaded: true,
        reasons: ['1 of 4 requests refused (queue_timeout 1)'],
        offered_tokens_per_s: 1333.4,
        capacity_tokens_per_s: 1000,
        load: 1.3334,
        time_scale_for_capacity: 1.4,
        advice: ['a', 'b'],
      }),
    );
    expect(text).toBe(
      'This run is overloaded: 1 of 4 requests refused (queue_timeout 1).\n\n' +
        'Offered **1,333 tokens/s** (input + output of every request over the arrival span) against a capacity of **1,000 tokens/s** ' +
        '(served tokens per GPU-busy second): load **1.33**.\n\n- a\n- b',
    );
  });
});
