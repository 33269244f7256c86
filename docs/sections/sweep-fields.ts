/** The `sweep-fields`, `serve-sweep-fields` and `serving-options` sections: the fields the sweep parsers accept, the serving options and cache policies. */
import type { Option } from 'commander';
import { buildProgram } from '../../cli/program.js';
import { listCachePolicies } from '../../serving/cache-policy-registry.js';
import { DEFAULT_SERVING_OPTIONS } from '../../serving/serving-config.js';
import { parseServeSweepSpec } from '../../studies/serve-sweep-spec.js';
import { parseSweepSpec } from '../../studies/sweep-spec.js';
import { GENERATED_BY, table } from './markdown.js';

/** The fields a sweep parser accepts, as its own "unknown field" message lists them. */
function acceptedFields(parse: () => unknown): string[] {
  try {
    parse();
  } catch (e) {
    const m = /\(fields: ([^)]*)\)/.exec((e as Error).message);
    if (m) return m[1].split(', ');
    throw e;
  }
  throw new Error('the sweep parser accepted an unknown field');
}

const PROBE = '__not_a_field__';

/** What each sweep-file field means; a field the parser accepts without an entry here is an error. */
const ATTENTION_FIELDS: Record<string, [string, string]> = {
  kind: ['`"attention"` (default) or `"serve"`', 'which grammar the file follows'],
  name: ['string', 'the sweep\'s name (default: the file name without its extension)'],
  traces: ['list, required', 'a `.kvt` path (relative to the sweep file), `{ "path": …, "name": … }`, or `{ "generate": { generator settings }, "name": … }`'],
  policies: ['list, required', 'a policy name, or `{ "name": …, "options": { … } }` with the policy\'s options ([policies.md](policies.md))'],
  budgets: ['list, required', 'HBM budgets for the KV cache: a share (`"20%"`, `0.2`) or a size (`"4GiB"`); `full` always runs at 100%'],
  hardware: ['list, required', 'preset names or profile paths ending in `.json` (relative to the sweep file)'],
  models: ['list', 'model preset names, model JSON paths, or `null` = the trace\'s model (default `[null]`)'],
  seeds: ['list of integers', 'seeds of the generated traces (default `[1]`); file traces run once'],
  trace_steps: ['integer >= 0', 'decode steps recorded in each run\'s `trace.json` (default 16)'],
  copy_mode: ['`"per-run"` or `"gather"`', 'how PCIe copies are charged (as `kvtier run --copy-mode`)'],
  quality_target: ['`{ "recall_min": 0–1, "quant_error_max": >= 0 }`', 'what the report\'s recommendation asks of a policy at each budget (default recall ≥ 0.99, quantization error ≤ 0.012)'],
};

const SERVE_FIELDS: Record<string, [string, string]> = {
  kind: ['`"serve"`', 'marks a serving sweep'],
  name: ['string', 'the sweep\'s name (default: the file name without its extension)'],
  requests: ['list, required', 'request-trace paths (relative to the sweep file) or `mooncake:conversation` / `mooncake:synthetic`'],
  caches: ['list, required', 'prefix-cache policy names (below)'],
  capacities: ['list, required', 'total prefix-cache capacity in tokens, or `"unbounded"` (the profile\'s tiers)'],
  hardware: ['list, required', 'preset names or profile paths ending in `.json`'],
  models: ['list, required', 'model preset names'],
  time_scales: ['list of numbers > 0', 'multipliers of arrival times (0.5 = twice the rate; default `[1]`)'],
  limit: ['integer > 0', 'replay only the first N requests of each trace'],
  options: ['object', 'serving options (below), each a number >= 0'],
};

function fieldTable(fields: string[], meaning: Record<string, [string, string]>, parser: string): string {
  const rows = fields.map((f) => {
    const m = meaning[f];
    if (!m) throw new Error(`${parser} accepts the field "${f}", which docs/generate.ts does not describe: add it to the field table there`);
    return [`\`${f}\``, m[0], m[1]];
  });
  const stale = Object.keys(meaning).filter((k) => !fields.includes(k));
  if (stale.length) throw new Error(`docs/generate.ts describes sweep fields that ${parser} no longer accepts: ${stale.join(', ')}`);
  return table(['field', 'value', 'meaning'], rows);
}

export function sweepFieldsSection(): string {
  const fields = acceptedFields(() => parseSweepSpec({ [PROBE]: 1 }, 'sweep.json'));
  return [GENERATED_BY('the fields studies/sweep-spec.ts accepts'), '', fieldTable(fields, ATTENTION_FIELDS, 'studies/sweep-spec.ts')].join('\n');
}

export function serveSweepFieldsSection(): string {
  const fields = acceptedFields(() => parseServeSweepSpec({ kind: 'serve', [PROBE]: 1 }, 'sweep.json', 'x'));
  return [GENERATED_BY('the fields studies/serve-sweep-spec.ts accepts'), '', fieldTable(fields, SERVE_FIELDS, 'studies/serve-sweep-spec.ts')].join('\n');
}

/** `maxBatchTokens` -> the `kvtier serve --max-batch-tokens` option, whose help text describes it. */
function serveFlagOf(key: string): Option | undefined {
  const serve = buildProgram().commands.find((c) => c.name() === 'serve');
  const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  return serve?.options.find((o) => o.long === flag);
}

export function servingOptionsSection(): string {
  const rows = Object.entries(DEFAULT_SERVING_OPTIONS).map(([key, value]) => {
    const flag = serveFlagOf(key);
    if (!flag) throw new Error(`serving option "${key}" has no "kvtier serve" flag to take its description from`);
    return [`\`${key}\``, `\`${value}\``, `\`${flag.long}\``, flag.description];
  });
  const caches = listCachePolicies().map((c) => [`\`${c.name}\``, c.description]);
  return [
    GENERATED_BY('serving/serving-config.ts (DEFAULT_SERVING_OPTIONS), the `kvtier serve` flags and serving/cache-policy-registry.ts'),
    '',
    table(['option', 'default', 'same as', 'meaning'], rows),
    '',
    'Prefix-cache policies (`caches`, `kvtier serve --cache`):',
    '',
    table(['cache', 'meaning'], caches),
  ].join('\n');
}
