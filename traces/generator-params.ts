/**
 * Parameters of the seeded attention generator, their defaults, the named presets, and the
 * resolution (preset, then overrides) with checks. Every name is the one the CLI and the trace's
 * provenance use. See generateSteps for the model they drive.
 */
import type { TraceEncoding } from './format.js';

export interface NeedleParams {
  /** where the needle block sits, as a fraction of the prompt (0 = start, 1 = end); default 0.5 */
  depth: number;
  /** first step at which the retrieval layers attend to it; default floor(steps / 2) */
  from_step: number;
  /** for how many steps; default max(1, floor(steps / 8)) */
  steps: number;
  /** share of each retrieval layer's mass on the needle block while active; default 0.6 */
  mass: number;
  /** retrieval layers; default the upper half, layers floor(layers / 2) .. layers - 1 */
  layers: number[];
}

export interface GeneratorParams {
  /** model name written to the header; default 'llama-3-8b' */
  model: string;
  /** default 32 (Llama-3-8B) */
  layers: number;
  /** KV-head groups recorded per layer; each is an independent row; default 1 */
  kv_groups: number;
  /** tokens per KV block; default 16 */
  block_size: number;
  /** default 4096 */
  prompt_tokens: number;
  /** decode steps; default 256 */
  steps: number;
  /** seed (a string or number; same seed and parameters => byte-identical file); default 1 */
  seed: string | number;
  /** 'auto' = topk when the last step has more than 256 blocks, else dense; default 'auto' */
  encoding: TraceEncoding | 'auto';
  /** blocks listed per (step, layer) with topk encoding; default 128 */
  topk: number;
  /** tokens at the start that form the attention sink (they lie in block 0 for block_size >= 4); default 4 */
  sink_tokens: number;
  /** share of each row's mass on the sink tokens; default 0.3 */
  sink_mass: number;
  /** the first this-many layers get sink_mass * sink_low_factor (no sink in the lowest layers); default 2 */
  sink_low_layers: number;
  /** default 0.1 */
  sink_low_factor: number;
  /** recent window: the last window_tokens tokens; default 64 */
  window_tokens: number;
  /** share of the concentrated mass on the recent window; default 0.25 */
  window_share: number;
  /** the window's mass decays as exp(-distance / window_decay_tokens); default 16 */
  window_decay_tokens: number;
  /** heavy-hitter blocks per row; default 32 */
  hh_count: number;
  /** heavy hitter of rank r (0-based) weighs 1 / (r + 1)^zipf_alpha; default 1.5 */
  zipf_alpha: number;
  /** lognormal jitter (stationary sigma) on heavy-hitter weights; default 0.3 */
  hh_jitter: number;
  /**
   * step-to-step correlation of the heavy-hitter and background jitter (an AR(1) process per
   * block): weights drift as the query changes instead of flickering; default 0.9
   */
  jitter_corr: number;
  /**
   * expected share of the heavy-hitter set kept from one step to the next, counting random
   * replacements, joins and topic shifts together; default 0.95
   */
  persistence: number;
  /** probability that a block leaving the recent window joins the heavy hitters; default 0.5 */
  join_prob: number;
  /** mean steps between query-dependent topic shifts (0 = none); default 64 */
  shift_every: number;
  /** share of the heavy hitters that a shift moves into the new topic region; default 0.25 */
  shift_fraction: number;
  /** width of a topic region in blocks; default 16 */
  shift_span_blocks: number;
  /** concentrated share (sink excluded) of layer 0: the rest is broad background; default 0.3 */
  concentration_low: number;
  /** concentrated share the upper layers approach; default 0.95 */
  concentration_high: number;
  /**
   * layer l has high - (high - low) * exp(-l / concentration_layers): broad lowest layers, sharp
   * from a few layers up whatever the depth (as measured in real models); default 1.5
   */
  concentration_layers: number;
  /** lognormal sigma of the persistent per-block background weights; default 1.5 */
  background_sigma: number;
  /** lognormal jitter (stationary sigma) on the background weights; default 0.3 */
  background_jitter: number;
  /** median per-token key L2 norm; default 16 */
  norm_median: number;
  /** lognormal sigma of per-token key norms; default 0.2 */
  norm_sigma: number;
  /** probability that a token's key is an outlier; default 0.002 */
  norm_outlier_prob: number;
  /** an outlier's norm is multiplied by this; default 3 */
  norm_outlier_scale: number;
  /** the needle (passkey) block, or null; default null */
  needle: NeedleParams | null;
}

/** What a preset may set: any parameter, the needle partially (its relative defaults fill the rest). */
export type PresetParams = Partial<Omit<GeneratorParams, 'needle'>> & { needle?: Partial<NeedleParams> };

export type GeneratorInput = Partial<Omit<GeneratorParams, 'needle'>> & {
  preset?: PresetName;
  needle?: Partial<NeedleParams> | null;
};

export const DEFAULT_GENERATOR_PARAMS: Readonly<Omit<GeneratorParams, 'needle'>> & { needle: null } = {
  model: 'llama-3-8b',
  layers: 32,
  kv_groups: 1,
  block_size: 16,
  prompt_tokens: 4096,
  steps: 256,
  seed: 1,
  encoding: 'auto',
  topk: 128,
  sink_tokens: 4,
  sink_mass: 0.3,
  sink_low_layers: 2,
  sink_low_factor: 0.1,
  window_tokens: 64,
  window_share: 0.25,
  window_decay_tokens: 16,
  hh_count: 32,
  zipf_alpha: 1.5,
  hh_jitter: 0.3,
  jitter_corr: 0.9,
  persistence: 0.95,
  join_prob: 0.5,
  shift_every: 64,
  shift_fraction: 0.25,
  shift_span_blocks: 16,
  concentration_low: 0.3,
  concentration_high: 0.95,
  concentration_layers: 1.5,
  background_sigma: 1.5,
  background_jitter: 0.3,
  norm_median: 16,
  norm_sigma: 0.2,
  norm_outlier_prob: 0.002,
  norm_outlier_scale: 3,
  needle: null,
};

/** With 'auto' encoding, traces with more blocks than this at the last step use topk. */
export const AUTO_DENSE_MAX_BLOCKS = 256;

/** Fitted to traces/captured/brown-long-8k.kvt (traces/fit/fit-captured.ts; residuals in traces/fit/fitted.json). */
const CAPTURED_BROWN = {
  sink_mass: 0,
  concentration_low: 0.73,
  concentration_high: 0.995,
  concentration_layers: 1.71,
  window_share: 0.885,
  window_decay_tokens: 13,
  hh_count: 76,
  zipf_alpha: 0.696,
  persistence: 0.462,
  background_sigma: 1.76,
  hh_jitter: 1.73,
} satisfies PresetParams;

/** Named parameter sets for `--preset`; explicit parameters override them. */
export const PRESETS = {
  /** the defaults: Llama-like, sinks, a recent window, persistent Zipf heavy hitters */
  default: {},
  /** a passkey at half depth, retrieved by the upper half of the layers from the middle of decoding */
  needle: { needle: {} },
  /** flat attention: weak concentration, many heavy hitters, little sink */
  broad: {
    concentration_low: 0.1,
    concentration_high: 0.6,
    hh_count: 128,
    zipf_alpha: 0.8,
    background_sigma: 1.0,
    sink_mass: 0.1,
    persistence: 0.9,
  },
  /** sharp attention: strong concentration, few stable heavy hitters */
  sharp: {
    concentration_low: 0.6,
    concentration_high: 0.99,
    hh_count: 16,
    zipf_alpha: 1.8,
    persistence: 0.98,
    join_prob: 0.2,
  },
  /** like the small captured model in shared/notes/capture-first-attempt.md: no sinks formed */
  'no-sinks': { sink_mass: 0 },
  /**
   * fitted to the captured reference trace traces/captured/brown-long-8k.kvt (a small GPT trained on
   * Brown; traces/fit/fit-captured.ts, residuals in traces/fit/fitted.json): no sinks, a strong
   * recent window, ~76 weak (Zipf 0.7) heavy hitters with low persistence
   */
  'captured-brown': CAPTURED_BROWN,
  'captured-brown-needle': {
    ...CAPTURED_BROWN,
    needle: { depth: 0.5, from_step: 0, steps: 5, mass: 0.324, layers: [1, 4] },
  },
} satisfies Record<string, PresetParams>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

function bad(name: string, expected: string, got: unknown): Error {
  return new Error(`invalid generator parameter '${name}': expected ${expected}, got ${JSON.stringify(got) ?? String(got)}`);
}

function int(name: string, v: unknown, min: number, max = 2 ** 31): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(name, `an integer in [${min}, ${max}]`, v);
  return v;
}

function num(name: string, v: unknown, min: number, max: number, minOpen = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (minOpen && v === min)) {
    throw bad(name, `a number in ${minOpen ? '(' : '['}${min}, ${max}]`, v);
  }
  return v;
}

/** Heavy-hitter turnover per step from joins and shifts; the rest of 1 - persistence is random replacement. */
export function turnoverBudget(p: GeneratorParams): { join: number; shift: number; random: number } {
  const join = p.join_prob / (p.block_size * p.hh_count);
  const shift = p.shift_every > 0 ? Math.round(p.shift_fraction * p.hh_count) / p.hh_count / p.shift_every : 0;
  return { join, shift, random: 1 - p.persistence - join - shift };
}

/** Apply the preset and the overrides, fill the needle's relative defaults, and check everything. */
export function resolveGeneratorParams(input: GeneratorInput = {}): GeneratorParams {
  const presetName = input.preset ?? 'default';
  const preset = (PRESETS as Record<string, PresetParams>)[presetName];
  if (preset === undefined) throw bad('preset', `one of ${PRESET_NAMES.join(', ')}`, presetName);
  const { preset: _unused, needle: needleIn, ...rest } = input;
  for (const key of Object.keys(rest)) {
    if (!(key in DEFAULT_GENERATOR_PARAMS)) throw bad(key, `a known parameter name (one of ${Object.keys(DEFAULT_GENERATOR_PARAMS).join(', ')})`, key);
  }
  const merged = { ...DEFAULT_GENERATOR_PARAMS, ...preset, ...rest } as Omit<GeneratorParams, 'needle'>;
  const p: GeneratorParams = { ...merged, needle: null };
  if (typeof p.model !== 'string' || p.model.length === 0) throw bad('model', 'a non-empty string', p.model);
  int('layers', p.layers, 1, 65535);
  int('kv_groups', p.kv_groups, 1, 1024);
  int('block_size', p.block_size, 1, 1 << 20);
  int('prompt_tokens', p.prompt_tokens, 0, 2 ** 30);
  int('steps', p.steps, 0, 2 ** 24);
  if (!(typeof p.seed === 'string' || (typeof p.seed === 'number' && Number.isFinite(p.seed)))) {
    throw bad('seed', 'a string or a finite number', p.seed);
  }
  if (!['auto', 'dense', 'topk'].includes(p.encoding)) throw bad('encoding', '"auto", "dense" or "topk"', p.encoding);
  int('topk', p.topk, 1);
  int('sink_tokens', p.sink_tokens, 0);
  num('sink_mass', p.sink_mass, 0, 0.99);
  int('sink_low_layers', p.sink_low_layers, 0);
  num('sink_low_factor', p.sink_low_factor, 0, 1);
  int('window_tokens', p.window_tokens, 1);
  num('window_share', p.window_share, 0, 1);
  num('window_decay_tokens', p.window_decay_tokens, 0, 1e9, true);
  int('hh_count', p.hh_count, 0, 1 << 20);
  num('zipf_alpha', p.zipf_alpha, 0, 10);
  num('hh_jitter', p.hh_jitter, 0, 5);
  num('jitter_corr', p.jitter_corr, 0, 1);
  num('persistence', p.persistence, 0, 1);
  num('join_prob', p.join_prob, 0, 1);
  num('shift_every', p.shift_every, 0, 1e9);
  if (p.shift_every > 0 && p.shift_every < 1) throw bad('shift_every', '0 (no shifts) or a number >= 1', p.shift_every);
  num('shift_fraction', p.shift_fraction, 0, 1);
  int('shift_span_blocks', p.shift_span_blocks, 1);
  num('concentration_low', p.concentration_low, 0, 1);
  num('concentration_high', p.concentration_high, 0, 1);
  num('concentration_layers', p.concentration_layers, 0, 1e6, true);
  num('background_sigma', p.background_sigma, 0, 5);
  num('background_jitter', p.background_jitter, 0, 5);
  num('norm_median', p.norm_median, 0, 1e6, true);
  num('norm_sigma', p.norm_sigma, 0, 5);
  num('norm_outlier_prob', p.norm_outlier_prob, 0, 1);
  num('norm_outlier_scale', p.norm_outlier_scale, 1, 1e3);
  if (p.hh_count > 0) {
    const t = turnoverBudget(p);
    if (t.random < -1e-12) {
      throw bad(
        'persistence',
        `at most ${(1 - t.join - t.shift).toFixed(4)}: joins (join_prob / (block_size * hh_count) = ${t.join.toFixed(4)}) ` +
          `and shifts (round(shift_fraction * hh_count) / hh_count / shift_every = ${t.shift.toFixed(4)}) already ` +
          'replace more heavy hitters per step than 1 - persistence allows',
        p.persistence,
      );
    }
  }
  const presetNeedle = preset.needle;
  const needle = needleIn === null ? null : needleIn !== undefined ? { ...presetNeedle, ...needleIn } : presetNeedle;
  if (needle !== undefined && needle !== null) p.needle = resolveNeedle(needle, p);
  return p;
}

function resolveNeedle(n: Partial<NeedleParams>, p: GeneratorParams): NeedleParams {
  const upper: number[] = [];
  for (let l = Math.floor(p.layers / 2); l < p.layers; l++) upper.push(l);
  const r: NeedleParams = {
    depth: n.depth ?? 0.5,
    from_step: n.from_step ?? Math.floor(p.steps / 2),
    steps: n.steps ?? Math.max(1, Math.floor(p.steps / 8)),
    mass: n.mass ?? 0.6,
    layers: n.layers ?? upper,
  };
  for (const key of Object.keys(n)) {
    if (!(key in r)) throw bad(`needle.${key}`, 'one of depth, from_step, steps, mass, layers', key);
  }
  num('needle.depth', r.depth, 0, 1);
  int('needle.from_step', r.from_step, 0);
  int('needle.steps', r.steps, 1);
  num('needle.mass', r.mass, 0, 1);
  if (!Array.isArray(r.layers) || r.layers.some((l) => !Number.isInteger(l) || l < 0 || l >= p.layers)) {
    throw bad('needle.layers', `an array of layer numbers in [0, ${p.layers - 1}]`, r.layers);
  }
  if (r.from_step >= p.steps && p.steps > 0) throw bad('needle.from_step', `a step < steps (${p.steps})`, r.from_step);
  if (needleBlock(r, p) < 1) {
    throw bad('needle.depth', 'a depth whose block is not block 0 (the sink) — raise depth or prompt_tokens', r.depth);
  }
  return { ...r, layers: [...r.layers] };
}

/** The needle's block: the block holding token floor(depth * (prompt_tokens - 1)). */
export function needleBlock(n: Pick<NeedleParams, 'depth'>, p: Pick<GeneratorParams, 'prompt_tokens' | 'block_size'>): number {
  return Math.floor(Math.floor(n.depth * Math.max(0, p.prompt_tokens - 1)) / p.block_size);
}
