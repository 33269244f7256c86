/**
 * The generated parts of docs/*.md, written from the code so that the pages cannot drift from it:
 * the CLI's help (the commander program of cli/), the policy registry with its options, the hardware
 * and model presets, the sweep-file fields, the serving options and the HIL attention options (from
 * the native addon's table, when the addon loads).
 *
 * A page holds a generated section between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`.
 * `npm run docs` (npx tsx docs/generate.ts) rewrites every section of every page in docs/;
 * `npx tsx docs/generate.ts --check` only says which sections differ (exit 1 if any).
 * test/docs/docs-fresh.test.ts fails when a section differs from what this file gives now.
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command, Option } from 'commander';
import { buildProgram } from '../cli/main.js';
import { loadHil } from '../hil/load-addon.js';
import { registerBuiltinPolicies } from '../policies/builtin.js';
import { listPolicies } from '../policies/registry.js';
import { DEFAULT_GENERATOR_PARAMS, PRESETS } from '../traces/generator-params.js';
import type { OptionSpec } from '../policies/policy.js';
import { listHardware, loadHardware } from '../sim/hardware/load-profile.js';
import { GPU_FIELDS, GPU_OPTIONAL_FIELDS, LINK_FIELDS, PROFILE_SCHEMA, TIER_FIELDS } from '../sim/hardware/validate-profile.js';
import { getModel, listModels } from '../sim/models/load-model.js';
import { kvBytes } from '../sim/models/model.js';
import { DEFAULT_SERVING_OPTIONS } from '../serving/serving-config.js';
import { listCachePolicies } from '../serving/cache-policy-registry.js';
import { parseSweepSpec } from '../studies/sweep-spec.js';
import { parseServeSweepSpec } from '../studies/serve-sweep-spec.js';

export const DOCS_DIR = dirname(fileURLToPath(import.meta.url));

/** Help text wraps at this width whatever the terminal is, so the pages are the same everywhere. */
const HELP_WIDTH = 100;

const GENERATED_BY = (what: string) => `<!-- written by \`npm run docs\` from ${what}; edit the code, not this section -->`;

/** A Markdown table cell: pipes escaped, line breaks folded, < and > outside code spans escaped. */
export function cell(s: string): string {
  const folded = s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
  return folded
    .split('`')
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, '&lt;').replace(/>/g, '&gt;') : part))
    .join('`');
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// CLI

function isHelpCommand(c: Command): boolean {
  return c.name() === 'help' && c.description() === 'display help for command';
}

/** Every command of the program, depth first in registration order, with its full name. */
export function commandsOf(program: Command): { path: string; command: Command }[] {
  const out: { path: string; command: Command }[] = [];
  const walk = (c: Command, path: string) => {
    c.configureHelp({ helpWidth: HELP_WIDTH });
    out.push({ path, command: c });
    for (const s of c.commands) if (!isHelpCommand(s)) walk(s, `${path} ${s.name()}`);
  };
  walk(program, program.name());
  return out;
}

function cliSection(): string {
  const cmds = commandsOf(buildProgram());
  const parts = [GENERATED_BY('the commander program in cli/ (`kvtier <command> --help`)'), ''];
  parts.push('Commands:', '');
  for (const { path, command } of cmds.slice(1)) {
    parts.push(`- [\`${path}\`](#${path.replace(/ /g, '-')}) — ${command.description().split('\n')[0]}`);
  }
  for (const { path, command } of cmds) {
    parts.push('', `### ${path}`, '', '```text', command.helpInformation().trimEnd(), '```');
  }
  return parts.join('\n');
}

// ---------------------------------------------------------------------------------------------
// policies

function optionRange(o: OptionSpec): string {
  if (o.choices) return o.choices.map((c) => `\`${c}\``).join(', ');
  if (o.type === 'boolean') return '`true`, `false`';
  if (o.min !== undefined && o.max !== undefined) return `${o.min} to ${o.max}`;
  if (o.min !== undefined) return `>= ${o.min}`;
  if (o.max !== undefined) return `<= ${o.max}`;
  return '';
}

function policiesSection(): string {
  registerBuiltinPolicies();
  const defs = listPolicies();
  const parts = [GENERATED_BY('the policy registry (policies/registry.ts, policies/builtin.ts; `kvtier policies`)'), ''];
  parts.push(table(['policy', 'options'], defs.map((d) => [`[\`${d.name}\`](#${d.name})${d.oracle ? ' (oracle)' : ''}`, d.options.map((o) => `\`${o.name}\``).join(', ') || '—'])));
  for (const d of defs) {
    parts.push('', `### ${d.name}`, '');
    if (d.oracle) parts.push('**Oracle**: reads the future; a bound to compare against, not a deployable policy.', '');
    parts.push(d.description, '', `Source: ${d.source}`, '');
    if (d.options.length === 0) {
      parts.push('No options.');
      continue;
    }
    parts.push(
      table(
        ['option', 'type', 'default', 'values', 'meaning'],
        d.options.map((o) => [`\`${o.name}\``, o.type, `\`${JSON.stringify(o.default)}\``, optionRange(o), o.description]),
      ),
    );
  }
  return parts.join('\n');
}

// ---------------------------------------------------------------------------------------------
// hardware and model presets

function gib(x: number): string {
  if (x >= 1024) return `${+(x / 1024).toFixed(2)} TiB`;
  return `${+x.toFixed(2)} GiB`;
}

function hardwarePresetsSection(): string {
  const rows = listHardware().map(({ name, description }) => {
    const p = loadHardware(name);
    const tiers = p.tiers.map((t) => `${t.name} ${gib(t.capacity_GiB)}`).join(', ');
    return [`\`${name}\``, p.gpu.name, tiers, description];
  });
  return [GENERATED_BY('the preset registry (sim/hardware/preset-registry.ts, presets/machines.json; `kvtier hardware`)'), '', table(['preset', 'GPU', 'tiers (capacity)', 'description'], rows)].join('\n');
}

/** The unit a profile field's name carries (kvtier-hardware/v1 puts units in field names). */
export function unitOf(field: string): string {
  if (field.endsWith('_GBps') || field === 'GBps') return 'GB/s (10^9 bytes/s)';
  if (field.endsWith('_us')) return 'µs';
  if (field.endsWith('_GiB')) return 'GiB (2^30 bytes)';
  if (field.endsWith('_TFLOPs')) return 'TFLOP/s (10^12 FLOP/s)';
  return '';
}

/** What each profile field means; a field the validator knows without an entry here is an error. */
const PROFILE_FIELD_MEANING: Record<string, Record<string, string>> = {
  gpu: {
    name: 'the GPU\'s name, for reports',
    hbm_bandwidth_GBps: 'HBM bandwidth kernels achieve (bytes read per second): the generic roofline\'s memory term',
    fp16_TFLOPs: 'dense FP16 tensor throughput kernels achieve: the roofline\'s compute term',
    kernel_launch_us: 'fixed cost of one kernel launch',
    reserved_GiB: 'HBM held back from the KV cache (activations, workspace, CUDA context)',
    attention_launch_us: 'optional: attention kernel roofline, fixed part (default: the generic roofline)',
    attention_GBps: 'optional: attention kernel roofline, bytes of KV read per second',
    attention_curve: 'optional: measured decode-attention time against context, `[{ "tokens": n, "us": t }, …]` ascending, FP16 KV; interpolated piecewise-linearly',
    linear_launch_us: 'optional: linear-layer (GEMV) kernel roofline, fixed part',
    linear_GBps: 'optional: linear-layer kernel roofline, weight bytes read per second',
    kernel_slowdown_under_h2d: 'optional, fraction: a compute kernel runs on for this fraction of the time it shares with copies into HBM (default 0)',
    kernel_slowdown_under_d2h: 'optional, fraction: the same for copies out of HBM (default 0)',
  },
  tier: {
    name: 'unique name used by links and policy options (`hbm`, `dram`, `cxl`, `nvme`, `hdd`, …)',
    kind: 'one of `hbm`, `dram`, `cxl`, `nvme`, `hdd`, `remote`; `tiers[0]` must be the GPU\'s HBM',
    capacity_GiB: 'capacity',
    read_GBps: 'sustained read bandwidth of the device itself',
    write_GBps: 'sustained write bandwidth of the device itself',
    read_latency_us: 'access latency added once per transfer that reads the tier',
    write_latency_us: 'access latency added once per transfer that writes the tier',
  },
  link: {
    name: 'the link\'s name, used in `bytes` keys of the outputs (`pcie:dram->hbm`)',
    a: 'tier name at one end',
    b: 'tier name at the other end',
    a_to_b: 'direction a → b: `{ "alpha_us", "GBps", "alpha_under_compute_us"? }`',
    b_to_a: 'direction b → a, the same fields',
    copy_engines: 'transfers in flight per direction at once (integer >= 1); more wait in FIFO order',
  },
  direction: {
    alpha_us: 'fixed cost of one transfer: time = alpha_us + bytes / GBps',
    GBps: 'bandwidth of one direction; transfers in flight at once share it',
    alpha_under_compute_us: 'optional: alpha of a transfer started while a kernel runs on the compute stream (default alpha_us)',
  },
};

function fieldRows(group: string, fields: readonly string[], optional: readonly string[] = []): string[][] {
  const meaning = PROFILE_FIELD_MEANING[group];
  const all = [...fields, ...optional];
  const stale = Object.keys(meaning).filter((k) => !all.includes(k));
  if (stale.length) throw new Error(`docs/generate.ts describes ${group} fields that sim/hardware/validate-profile.ts no longer knows: ${stale.join(', ')}`);
  return all.map((f) => {
    if (!meaning[f]) throw new Error(`sim/hardware/validate-profile.ts knows the ${group} field "${f}", which docs/generate.ts does not describe: add it there`);
    return [`\`${f}\``, unitOf(f), optional.includes(f) ? 'no' : 'yes', meaning[f]];
  });
}

/** The link-direction fields: those the shipped presets use, and the optional one. */
function directionFields(): string[] {
  const seen = new Set<string>();
  for (const { name } of listHardware()) for (const l of loadHardware(name).links) for (const d of [l.a_to_b, l.b_to_a]) for (const k of Object.keys(d)) seen.add(k);
  return [...seen];
}

function profileFieldsSection(): string {
  const head = ['field', 'unit', 'required', 'meaning'];
  const used = directionFields();
  const direction = Object.keys(PROFILE_FIELD_MEANING.direction);
  const unknown = used.filter((k) => !direction.includes(k));
  if (unknown.length) throw new Error(`a preset's link direction has fields docs/generate.ts does not describe: ${unknown.join(', ')}`);
  return [
    GENERATED_BY(`the field lists of sim/hardware/validate-profile.ts (schema \`${PROFILE_SCHEMA}\`)`),
    '',
    '`gpu`:',
    '',
    table(head, fieldRows('gpu', GPU_FIELDS, GPU_OPTIONAL_FIELDS)),
    '',
    '`tiers[]`:',
    '',
    table(head, fieldRows('tier', TIER_FIELDS)),
    '',
    '`links[]`:',
    '',
    table(head, fieldRows('link', LINK_FIELDS)),
    '',
    '`links[].a_to_b`, `links[].b_to_a`:',
    '',
    table(head, fieldRows('direction', ['alpha_us', 'GBps'], ['alpha_under_compute_us'])),
  ].join('\n');
}

function modelPresetsSection(): string {
  const rows = listModels().map(({ name, description }) => {
    const m = getModel(name);
    const perToken = m.layers * kvBytes(m, 1, 16);
    return [`\`${name}\``, String(m.layers), (perToken / 1024).toFixed(1), description];
  });
  return [GENERATED_BY('the model registry (sim/models/model-registry.ts; `kvtier models`)'), '', table(['model', 'layers', 'KV KiB/token (FP16)', 'description'], rows)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// sweep files

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

function sweepFieldsSection(): string {
  const fields = acceptedFields(() => parseSweepSpec({ [PROBE]: 1 }, 'sweep.json'));
  return [GENERATED_BY('the fields studies/sweep-spec.ts accepts'), '', fieldTable(fields, ATTENTION_FIELDS, 'studies/sweep-spec.ts')].join('\n');
}

function serveSweepFieldsSection(): string {
  const fields = acceptedFields(() => parseServeSweepSpec({ kind: 'serve', [PROBE]: 1 }, 'sweep.json', 'x'));
  return [GENERATED_BY('the fields studies/serve-sweep-spec.ts accepts'), '', fieldTable(fields, SERVE_FIELDS, 'studies/serve-sweep-spec.ts')].join('\n');
}

/** `maxBatchTokens` -> the `kvtier serve --max-batch-tokens` option, whose help text describes it. */
function serveFlagOf(key: string): Option | undefined {
  const serve = buildProgram().commands.find((c) => c.name() === 'serve');
  const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  return serve?.options.find((o) => o.long === flag);
}

function servingOptionsSection(): string {
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

// ---------------------------------------------------------------------------------------------
// trace generator

const GENERATOR_SOURCE = 'traces/generator-params.ts';

/**
 * The fields of an interface in a source file, in order, each with its doc comment folded to one
 * line ('' where it has none). An index signature (`[key: string]: T`) is listed as `[key]`.
 */
export function interfaceFields(source: string, iface: string, file = 'the source'): { name: string; doc: string }[] {
  const start = source.indexOf(`export interface ${iface} `);
  if (start < 0) throw new Error(`${file}: no "export interface ${iface}"`);
  const lines = source.slice(source.indexOf('{', start) + 1).split('\n');
  const out: { name: string; doc: string }[] = [];
  let depth = 0;
  let comment: string[] | null = null;
  let doc = '';
  for (const line of lines) {
    const t = line.trim();
    if (depth === 0 && t.startsWith('}')) break;
    if (depth === 0) {
      if (t.startsWith('/**')) comment = [];
      if (comment) {
        comment.push(t.replace(/^\/\*\*\s?/, '').replace(/\*\/$/, '').replace(/^\*\s?/, '').trim());
        if (t.endsWith('*/')) {
          doc = comment.filter(Boolean).join(' ');
          comment = null;
        }
        continue;
      }
      const m = /^(?:([a-zA-Z_][a-zA-Z0-9_]*)\??|\[([a-z]+): string\]):/.exec(t);
      if (m) out.push({ name: m[1] ?? `[${m[2]}]`, doc });
      doc = '';
    }
    depth += (line.match(/{/g) ?? []).length - (line.match(/}/g) ?? []).length;
  }
  return out;
}

/** The fields of an interface that carry a doc comment. */
export function documentedFields(source: string, iface: string): { name: string; doc: string }[] {
  return interfaceFields(source, iface, GENERATOR_SOURCE).filter((f) => f.doc !== '');
}

function generatorSection(): string {
  const source = fs.readFileSync(join(DOCS_DIR, '..', GENERATOR_SOURCE), 'utf8');
  const defaults = DEFAULT_GENERATOR_PARAMS as Record<string, unknown>;
  const fields = documentedFields(source, 'GeneratorParams');
  const undocumented = Object.keys(defaults).filter((k) => !fields.some((f) => f.name === k));
  if (undocumented.length) throw new Error(`${GENERATOR_SOURCE}: generator parameters without a doc comment in GeneratorParams: ${undocumented.join(', ')}`);
  const rows = fields.map((f) => [`\`${f.name}\``, `\`${JSON.stringify(defaults[f.name])}\``, f.doc.replace(/;?\s*default [^;]*$/, '') || '—']);
  const needle = documentedFields(source, 'NeedleParams').map((f) => [`\`needle.${f.name}\``, f.doc]);
  const presets = Object.entries(PRESETS).map(([name, p]) => [`\`${name}\``, Object.keys(p).length ? `\`${JSON.stringify(p)}\`` : '(the defaults)']);
  return [
    GENERATED_BY(`${GENERATOR_SOURCE} (the parameters' doc comments, DEFAULT_GENERATOR_PARAMS, PRESETS)`),
    '',
    table(['parameter', 'default', 'meaning'], rows),
    '',
    'The needle (`--set needle.depth=0.3`, or `"needle": { … }` in a sweep\'s `generate`):',
    '',
    table(['parameter', 'meaning'], needle),
    '',
    'Presets (`--preset NAME`, `"preset"` in a sweep\'s `generate`); explicit parameters override them:',
    '',
    table(['preset', 'sets'], presets),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// run outputs

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

function summarySection(): string {
  const source = fs.readFileSync(join(DOCS_DIR, '..', SUMMARY_SOURCE), 'utf8');
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

// ---------------------------------------------------------------------------------------------
// HIL attention options

/** The addon's option table, or null where the addon does not load (the section is then kept as it is). */
function hilOptionsSection(): string | null {
  const loaded = loadHil();
  if (!loaded.ok) return null;
  const rows = loaded.addon.attentionOptionTable().map((r) => [`\`${r.name}\``, r.values, `\`${r.default}\``, r.description]);
  return [GENERATED_BY('the native addon\'s option table (hil/native/common/attention-options.h; `kvtier hil options`)'), '', table(['option', 'values', 'default', 'meaning'], rows)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// sections and pages

export const SECTIONS: Record<string, () => string | null> = {
  cli: cliSection,
  policies: policiesSection,
  'hardware-presets': hardwarePresetsSection,
  'model-presets': modelPresetsSection,
  'profile-fields': profileFieldsSection,
  'sweep-fields': sweepFieldsSection,
  'serve-sweep-fields': serveSweepFieldsSection,
  'serving-options': servingOptionsSection,
  'hil-options': hilOptionsSection,
  'generator-params': generatorSection,
  'run-summary': summarySection,
};

const MARKER = /<!-- generated:([a-z0-9-]+) -->\n(?:[\s\S]*?\n)?<!-- \/generated:\1 -->/g;

/** The names of the generated sections a page holds, in order. */
export function sectionsIn(text: string): string[] {
  return [...text.matchAll(MARKER)].map((m) => m[1]);
}

/** The section's current text in a page (between its markers), or undefined. */
export function sectionText(text: string, name: string): string | undefined {
  for (const m of text.matchAll(MARKER)) {
    if (m[1] === name) return m[0].slice(`<!-- generated:${name} -->\n`.length, -`<!-- /generated:${name} -->`.length).replace(/\n$/, '');
  }
  return undefined;
}

/**
 * The page with every generated section replaced by `generated[name]` (a null one kept as it is).
 * A marker naming no known section is an error naming the page and the known sections.
 */
export function fillPage(file: string, text: string, generated: Record<string, string | null>): string {
  const opens = [...text.matchAll(/<!-- generated:([a-z0-9-]+) -->/g)].map((m) => m[1]);
  const closed = sectionsIn(text);
  for (const name of opens) {
    if (!(name in generated)) throw new Error(`${file}: unknown generated section "${name}" (known: ${Object.keys(generated).join(', ')})`);
    if (!closed.includes(name)) throw new Error(`${file}: generated section "${name}" has no closing <!-- /generated:${name} -->`);
  }
  return text.replace(MARKER, (whole, name: string) => {
    const body = generated[name];
    return body === null ? whole : `<!-- generated:${name} -->\n${body}\n<!-- /generated:${name} -->`;
  });
}

/** Every generated section as the code gives it now (null: its source is not available here). */
export function generateAll(): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [name, make] of Object.entries(SECTIONS)) out[name] = make();
  return out;
}

export function docPages(): string[] {
  return fs
    .readdirSync(DOCS_DIR)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join(DOCS_DIR, f));
}

function main(argv: string[]): number {
  const check = argv.includes('--check');
  const generated = generateAll();
  for (const [name, body] of Object.entries(generated)) if (body === null) console.error(`docs: section "${name}" kept as it is (its source is not available here: the HIL addon does not load)`);
  let stale = 0;
  for (const file of docPages()) {
    const text = fs.readFileSync(file, 'utf8');
    const next = fillPage(file, text, generated);
    if (next === text) continue;
    stale++;
    if (check) console.log(`${file}: generated sections differ from the code (run npm run docs)`);
    else {
      fs.writeFileSync(file, next);
      console.log(`wrote ${file}`);
    }
  }
  if (check) return stale ? 1 : 0;
  console.log(stale ? `${stale} page(s) updated` : 'docs are up to date');
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (e) {
    console.error(`docs: error: ${(e as Error).message}`);
    process.exitCode = 1;
  }
}
