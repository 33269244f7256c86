/** The `run-summary` section: the fields of summary.json and of a step row, from sim/metrics/summary.ts. */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { interfaceFields } from './interface-fields.js';
import { GENERATED_BY, table } from './markdown.js';
import { ROOT } from './root.js';

const SUMMARY_SOURCE = 'sim/metrics/summary.ts';

/** Meanings of the fields whose declaration has no doc comment; a field with neither is an error. */
const SUMMARY_MEANING: Record<string, Record<string, string>> = {
  RunSummary: {
    schema: '`"kvtier-summary/v1"`',
    status: '`"ok"`',
    trace: 'the trace replayed',
    policy: 'the policy\'s name',
    model: 'the model\'s name',
    hardware: 'the hardware profile\'s name',
    hbm_budget_bytes: 'the KV budget in HBM, bytes',
    hbm_budget_fraction: 'the KV budget as a fraction of the FP16 KV at the trace\'s final context',
    steps: 'decode steps replayed',
    tbt_ms: 'time between tokens, `{p50, p90, p99, mean, max}`: a decode step\'s time from the end of the previous step\'s compute to the end of its own',
    tokens_per_s: 'steps / total decode time',
    compute_ms: 'kernel time on the compute stream, total',
    stall_ms: 'compute-stream time waiting on memory, total',
    transfer_ms: 'memory-stream busy time, total',
    attention_recall: '`{mean, min, p1}` over steps of the share of the step\'s true attention mass on the blocks the kernel attended (mean over layers and KV groups): mean, worst step, 1st percentile',
    bytes_total: 'bytes moved, summed over link directions',
    peak_occupancy_bytes: 'the most bytes each tier held',
    actions: 'actions taken, per kind; `prefill_*` ones before the first decode step',
    refused_actions: 'actions the accounting refused, per kind (`alloc`: a new block that found HBM full)',
    wall_s: 'wall-clock seconds the run took (not simulated time)',
  },
  StepRow: {
    step: 'decode step (0-based)',
    context_tokens: 'tokens in the context at this step',
  },
};

function summaryTable(source: string, iface: 'RunSummary' | 'StepRow'): string {
  const rows = interfaceFields(source, iface, SUMMARY_SOURCE).map((f) => {
    const meaning = SUMMARY_MEANING[iface][f.name] ?? f.doc;
    if (!meaning) throw new Error(`${SUMMARY_SOURCE}: ${iface}.${f.name} has no doc comment and docs/generate.ts no meaning for it: add one`);
    return [f.name.startsWith('[') ? '(more columns)' : `\`${f.name}\``, meaning];
  });
  return table(['field', 'meaning'], rows);
}

export function summarySection(): string {
  const source = fs.readFileSync(join(ROOT, SUMMARY_SOURCE), 'utf8');
  return [
    GENERATED_BY(`${SUMMARY_SOURCE} (RunSummary and StepRow, with their doc comments)`),
    '',
    '`summary.json`:',
    '',
    summaryTable(source, 'RunSummary'),
    '',
    'A row of `steps.arrow` / `steps.csv`:',
    '',
    summaryTable(source, 'StepRow'),
  ].join('\n');
}
