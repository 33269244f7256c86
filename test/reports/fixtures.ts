/** Hand-made sweep rows and step rows for the report tests: small, fixed, readable. */
import type { StepRow, SweepRow } from '../../sim/metrics/summary.js';

const MiB = 1024 ** 2;

type Metrics = Pick<
  SweepRow,
  'tbt_p50_ms' | 'tbt_p99_ms' | 'tokens_per_s' | 'stall_ms' | 'transfer_ms' | 'masking_efficiency' | 'recall_mean' | 'recall_min'
> & { h2d_MiB: number; d2h_MiB: number };

export function row(policy: string, budget: number, m: Metrics, over: Partial<SweepRow> = {}): SweepRow {
  const r: SweepRow = {
    id: `${policy}-b${budget}`,
    status: 'ok',
    error: '',
    trace: 'synthetic-32k',
    policy,
    model: 'llama-3-8b',
    hardware: 'h100-pcie5',
    hbm_budget_fraction: budget,
    seed: 1,
    tbt_p50_ms: m.tbt_p50_ms,
    tbt_p90_ms: (m.tbt_p50_ms + m.tbt_p99_ms) / 2,
    tbt_p99_ms: m.tbt_p99_ms,
    tokens_per_s: m.tokens_per_s,
    stall_ms: m.stall_ms,
    transfer_ms: m.transfer_ms,
    masking_efficiency: m.masking_efficiency,
    recall_mean: m.recall_mean,
    recall_min: m.recall_min,
    bytes_total: (m.h2d_MiB + m.d2h_MiB) * MiB,
    bytes_h2d: m.h2d_MiB * MiB,
    bytes_d2h: m.d2h_MiB * MiB,
    run_dir: `runs/${policy}-b${budget}`,
    ...over,
  };
  if (!over.id) r.id = `${r.trace}/${r.hardware}/${policy}/b${budget}`;
  return r;
}

/** Three budgets x (h2o, streaming, quest, oracle): TBT falls with budget, the oracle is lowest. */
export function sweepRows(opts: { oracle?: boolean; failed?: boolean } = {}): SweepRow[] {
  const rows: SweepRow[] = [];
  const budgets = [0.1, 0.25, 0.5];
  const policies: [string, number, number][] = [
    // name, TBT multiplier, recall loss multiplier
    ['h2o', 1.0, 1.0],
    ['streaming', 1.15, 2.2],
    ['quest', 1.3, 0.6],
  ];
  budgets.forEach((b, i) => {
    const base = 42 / (1 + 6 * b); // ms
    for (const [policy, t, loss] of policies) {
      rows.push(
        row(policy, b, {
          tbt_p50_ms: round(base * t),
          tbt_p99_ms: round(base * t * (2.5 - i * 0.4)),
          tokens_per_s: round(1000 / (base * t)),
          stall_ms: round(900 * t * (1 - b)),
          transfer_ms: round(1400 * (1 - b) + 100),
          masking_efficiency: round(1 - (900 * t * (1 - b)) / (1400 * (1 - b) + 100) / 1.6),
          recall_mean: round(1 - 0.12 * loss * (1 - b)),
          recall_min: round(1 - 0.35 * loss * (1 - b)),
          h2d_MiB: round(800 * t * (1 - b)),
          d2h_MiB: round(300 * (1 - b)),
        }),
      );
    }
    if (opts.oracle !== false) {
      rows.push(
        row('oracle', b, {
          tbt_p50_ms: round(base * 0.8),
          tbt_p99_ms: round(base * 1.2),
          tokens_per_s: round(1000 / (base * 0.8)),
          stall_ms: round(300 * (1 - b)),
          transfer_ms: round(900 * (1 - b) + 100),
          masking_efficiency: round(1 - (300 * (1 - b)) / (900 * (1 - b) + 100)),
          recall_mean: round(1 - 0.03 * (1 - b)),
          recall_min: round(1 - 0.1 * (1 - b)),
          h2d_MiB: round(500 * (1 - b)),
          d2h_MiB: round(150 * (1 - b)),
        }),
      );
    }
  });
  if (opts.failed) {
    rows.push({
      ...row('snapkv', 0.1, {
        tbt_p50_ms: NaN, tbt_p99_ms: NaN, tokens_per_s: NaN, stall_ms: NaN, transfer_ms: NaN,
        masking_efficiency: NaN, recall_mean: NaN, recall_min: NaN, h2d_MiB: 0, d2h_MiB: 0,
      }),
      status: 'failed',
      error: 'budget 0.1 < sink + window (<script>alert(1)</script>)',
    });
  }
  return rows;
}

/** 40 decode steps with a periodic stall pattern, scaled per policy; deterministic. */
export function stepsFor(r: SweepRow): StepRow[] {
  const scale = { h2o: 1, streaming: 1.4, quest: 1.8, oracle: 0.4 }[r.policy] ?? 1;
  const out: StepRow[] = [];
  for (let s = 0; s < 40; s++) {
    const stall = round(scale * (0.2 + (s % 8 === 0 ? 2.5 : 0.3 * ((s * 7) % 5))));
    out.push({
      step: s,
      context_tokens: 32768 + s,
      latency_ms: round(10 + stall),
      compute_ms: 10,
      stall_ms: stall,
      transfer_ms: round(stall * 1.5 + 1),
      recall: 0.95,
      recall_min: 0.9,
      bytes_moved: 4 * MiB,
    });
  }
  return out;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
