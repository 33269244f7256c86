/** Per-request table of a serving run as CSV (requests.csv); NaN (not applicable) is left empty. */
import type { RequestRecord } from './request-record.js';

const cell = (x: number): string => (Number.isFinite(x) ? String(Math.round(x * 1000) / 1000) : '');

export function requestsCsv(records: readonly RequestRecord[], tierNames: readonly string[]): string {
  const head = [
    'id', 'line', 'arrival_ms', 'status', 'reason', 'input_tokens', 'output_tokens', 'prefix_hit_tokens',
    ...tierNames.map((t) => `hit_${t}_tokens`),
    'prefill_tokens', 'queue_ms', 'promote_ms', 'ttft_ms', 'tbt_mean_ms', 'tbt_max_ms', 'e2e_ms', 'finish_ms', 'slo_met',
  ];
  const lines = [head.join(',')];
  for (const r of records) {
    lines.push(
      [
        r.id, r.line, cell(r.arrival_ms), r.status, r.reason, r.input_tokens, r.output_tokens, r.prefix_hit_tokens,
        ...r.hit_tokens.map(String),
        r.prefill_tokens, cell(r.queue_ms), cell(r.promote_ms), cell(r.ttft_ms), cell(r.tbt_mean_ms), cell(r.tbt_max_ms),
        cell(r.e2e_ms), cell(r.finish_ms), r.slo_met ? 1 : 0,
      ].join(','),
    );
  }
  return lines.join('\n') + '\n';
}
