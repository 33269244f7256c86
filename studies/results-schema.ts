/**
 * The column sets of a sweep's results tables. The columns come from here, never from the rows, so
 * a table has the same columns and types whatever succeeded or failed (and when it has no rows).
 * A failed configuration is a row with status "failed", its error, and no metrics.
 */
import { loadHardware } from '../sim/hardware/load-profile.js';
import type { SweepRow } from '../sim/metrics/summary.js';
import { DEFAULT_SERVING_TIER_KINDS } from '../serving/serving-tiers.js';
import type { ServeSweepSpec } from './serve-sweep-spec.js';

export type ColumnType = 'string' | 'number';

export interface Column {
  name: string;
  type: ColumnType;
}

const str = <N extends string>(name: N) => ({ name, type: 'string' as const });
const num = <N extends string>(name: N) => ({ name, type: 'number' as const });

const SWEEP_COLUMN_LIST = [
  str('id'),
  str('status'),
  str('error'),
  str('trace'),
  str('policy'),
  str('model'),
  str('hardware'),
  num('hbm_budget_fraction'),
  num('seed'),
  num('tbt_p50_ms'),
  num('tbt_p90_ms'),
  num('tbt_p99_ms'),
  num('tokens_per_s'),
  num('stall_ms'),
  num('transfer_ms'),
  num('masking_efficiency'),
  num('recall_mean'),
  num('recall_min'),
  num('bytes_total'),
  num('bytes_h2d'),
  num('bytes_d2h'),
  num('quant_error_mean'),
  num('quant_error_max'),
  num('energy_j_per_token'),
  num('needle_unavailable_steps'),
  num('needle_retained'),
  str('run_dir'),
] satisfies { name: keyof SweepRow; type: ColumnType }[];

/** every SweepRow field has a column (a new field without one fails to compile here) */
const everyField: Exclude<keyof SweepRow, (typeof SWEEP_COLUMN_LIST)[number]['name']> extends never ? true : never = true;
void everyField;

/** Attention-level sweep: one column per SweepRow field, in this order. */
export const SWEEP_COLUMNS: readonly Column[] = SWEEP_COLUMN_LIST;

const SERVE_HEAD: readonly Column[] = [
  str('id'),
  str('status'),
  str('error'),
  str('trace'),
  str('cache_policy'),
  str('model'),
  str('hardware'),
  num('time_scale'),
  num('capacity'),
  num('capacity_tokens'),
  num('requests'),
  num('served'),
  num('refused'),
  num('backpressure_events'),
  num('prefix_hit_ratio'),
  num('theoretical_prefix_hit_ratio'),
];

const SERVE_TAIL: readonly Column[] = [
  num('ttft_p50_ms'),
  num('tbt_p50_ms'),
  num('ttft_p90_ms'),
  num('tbt_p90_ms'),
  num('ttft_p99_ms'),
  num('tbt_p99_ms'),
  num('slo_attainment'),
  num('requests_per_s'),
  num('output_tokens_per_s'),
  num('bytes_total'),
  str('run_dir'),
];

/**
 * Serving sweep: the fixed columns plus one `hit_<tier>` per prefix-cache tier of the sweep's
 * hardware (in the order the profiles list them, first appearance wins). A profile that does not
 * load adds no tier; its configurations fail and say why.
 */
export function serveSweepColumns(spec: Pick<ServeSweepSpec, 'hardware'>): Column[] {
  const tiers: string[] = [];
  for (const h of spec.hardware) {
    let names: string[];
    try {
      names = loadHardware(h).tiers.filter((t) => DEFAULT_SERVING_TIER_KINDS.includes(t.kind)).map((t) => t.name);
    } catch {
      names = [];
    }
    for (const n of names) if (!tiers.includes(n)) tiers.push(n);
  }
  return [...SERVE_HEAD, ...tiers.map((t) => num(`hit_${t}`)), ...SERVE_TAIL];
}
