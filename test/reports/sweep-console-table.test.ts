import { describe, expect, it } from 'vitest';
import { sweepConsoleTable } from '../../reports/sweep-console-table.js';
import type { SweepRow } from '../../sim/metrics/summary.js';

function row(over: Partial<SweepRow>): SweepRow {
  return {
    id: 'x',
    status: 'ok',
    error: '',
    trace: 't.kvt',
    policy: 'full',
    model: 'llama-3-8b',
    hardware: 'h100-pcie5',
    hbm_budget_fraction: 1,
    seed: 1,
    tbt_p50_ms: 5,
    tbt_p90_ms: 5,
    tbt_p99_ms: 5,
    tokens_per_s: 200,
    stall_ms: 0,
    transfer_ms: 0,
    masking_efficiency: 1,
    recall_mean: 1,
    recall_min: 1,
    bytes_total: 0,
    bytes_h2d: 0,
    bytes_d2h: 0,
    run_dir: '',
    ...over,
  };
}

describe('sweepConsoleTable', () => {
  it('prints one aligned block per trace x hardware, budgets ascending, grid order within a budget', () => {
    const rows: SweepRow[] = [
      row({ trace: 'a.kvt', policy: 'full', hbm_budget_fraction: 1, tbt_p50_ms: 5.456, quant_error_mean: 0 }),
      row({ trace: 'a.kvt', policy: 'h2o', hbm_budget_fraction: 0.4, tbt_p50_ms: 5.4, recall_mean: 0.7104, quant_error_mean: 0 }),
      row({ trace: 'a.kvt', policy: 'oracle', hbm_budget_fraction: 0.4, tbt_p50_ms: 23.38, recall_mean: 0.8659, bytes_total: 62.21 * 2 ** 30 }),
      row({ trace: 'a.kvt', policy: 'h2o', hbm_budget_fraction: 0.1, tbt_p50_ms: 5.37, recall_mean: 0.54 }),
      row({ trace: 'a.kvt', policy: 'synapsevm', hbm_budget_fraction: 0.1, tbt_p50_ms: 4180.89, quant_error_mean: 0.5344, bytes_total: 1536 }),
      row({ trace: 'a.kvt', policy: 'smartkv', status: 'failed', error: 'boom', hbm_budget_fraction: 0.1 }),
      row({ trace: 'b.kvt', hardware: 'a100-pcie4', policy: 'ntransformer', hbm_budget_fraction: 0.2, tbt_p50_ms: 188.31, quant_error_mean: 0.575, bytes_total: 250 * 2 ** 20 }),
    ];
    expect(sweepConsoleTable(rows)).toBe(
      [
        'a.kvt · h100-pcie5',
        '  budget  policy        TBT p50 ms  recall  quant err     moved',
        '  10%     h2o                 5.37   0.540          -       0 B',
        '  10%     synapsevm           4181   1.000      0.534  1.50 KiB',
        '  40%     h2o                 5.40   0.710      0.000       0 B',
        '  40%     oracle             23.38   0.866          -  62.2 GiB',
        '  100%    full                5.46   1.000      0.000       0 B',
        '',
        'b.kvt · a100-pcie4',
        '  budget  policy        TBT p50 ms  recall  quant err     moved',
        '  20%     ntransformer       188.3   1.000      0.575   250 MiB',
        '',
      ].join('\n'),
    );
  });

  it('names the model and seed in the block title only when the sweep has several', () => {
    const text = sweepConsoleTable([row({ seed: 1 }), row({ seed: 2, model: 'm2' })]);
    expect(text.split('\n').filter((l) => !l.startsWith('  '))).toEqual(['t.kvt · h100-pcie5 · llama-3-8b · seed 1', '', 't.kvt · h100-pcie5 · m2 · seed 2', '']);
  });

  it('prints nothing when no configuration succeeded', () => {
    expect(sweepConsoleTable([row({ status: 'failed' })])).toBe('');
  });
});
