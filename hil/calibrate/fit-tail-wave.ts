/**
 * The split attention kernel's tail wave (sim/attention-waves.ts) from the FP16 layer chains timed
 * around each context (measure.ts CHAIN_PHASE_BLOCKS): the dispatch's own plans at the timed contexts
 * give the split rule's parameters, and a least-squares fit over the contexts gives the time per chunk
 * of the tail wave's warps. The curve's points then hold the time without the tail wave.
 */
import { ATTENTION_KERNELS, type AttentionKernel, type AttentionWaves } from '../../sim/hardware/profile.js';
import { splitOf, tailChunks } from '../../sim/attention-waves.js';
import type { ChainPlan, ChainPoint } from './measure.js';

/** tokens per chunk of the dispatch (hil/native/common/attention-plan.h kChunkTokens) */
export const CHUNK_TOKENS = 16;

export type WavesRule = Omit<AttentionWaves, 'us_per_chunk' | 'kernels'>;

/**
 * The split rule the dispatch followed at every timed context, from its plans and the GPU's SM count:
 * slots = resident blocks x SMs, blocks per split = the grid's second dimension, warps per head = the
 * block's warps (1 with a warp per KV head). Undefined, with the reason, where no plan was recorded,
 * the plans differ in those, or a plan's splits or chunks per warp are not the rule's (a split count
 * given by an option, or a dispatch this rule does not describe).
 */
export function wavesRuleOf(chains: readonly ChainPoint[], multiprocessors: number): { rule?: WavesRule; reason?: string } {
  const plans = chains.flatMap((c) => c.plans ?? []);
  if (plans.length === 0) return { reason: 'no attention plan recorded with the chains' };
  if (!(multiprocessors > 0)) return { reason: 'no SM count' };
  const p0 = plans[0];
  const rule: WavesRule = { slots: p0.resident_blocks * multiprocessors, blocks_per_split: p0.grid[1], warps_per_head: p0.head_warps ? 1 : p0.warps_per_block, chunk_tokens: CHUNK_TOKENS };
  for (const p of plans) {
    const why = planOffRule(p, rule, multiprocessors);
    if (why) return { reason: why === 'differs' ? `the plans differ in resident blocks, grid or warps (at ${p0.tokens} and ${p.tokens} tokens)` : why };
  }
  return { rule };
}

/** undefined where the plan follows the rule; 'differs' where its resident blocks, grid or warps are another rule's; else what it chose against the rule */
function planOffRule(p: ChainPlan, rule: WavesRule, multiprocessors: number): string | undefined {
  const same = p.resident_blocks * multiprocessors === rule.slots && p.grid[1] === rule.blocks_per_split && (p.head_warps ? 1 : p.warps_per_block) === rule.warps_per_head;
  if (!same) return 'differs';
  const s = splitOf(Math.ceil(p.tokens / CHUNK_TOKENS), rule);
  if (s.splits !== p.splits || s.chunksPerWarp !== p.chunks_per_warp) return `at ${p.tokens} tokens the dispatch chose ${p.splits} splits of ${p.chunks_per_warp} chunks per warp, the rule ${s.splits} of ${s.chunksPerWarp}`;
  return undefined;
}

/**
 * The kernels whose dispatch follows the rule: FP16, and each other kernel timed in the layer chains
 * (kernels_in_situ, by its precision name) whose every point carries plans, each the rule's.
 */
export function kernelsFollowing(rule: WavesRule, kernels: readonly (ChainPoint & { precision: string })[], multiprocessors: number): AttentionKernel[] {
  const out: AttentionKernel[] = ['fp16'];
  for (const name of ATTENTION_KERNELS) {
    if (name === 'fp16') continue;
    const pts = kernels.filter((k) => k.precision === name);
    if (pts.length === 0 || pts.some((k) => !k.plans?.length)) continue;
    if (pts.every((k) => k.plans!.every((p) => planOffRule(p, rule, multiprocessors) === undefined))) out.push(name);
  }
  return out;
}

export interface TailWaveFit {
  /** time per chunk of a tail-wave warp; undefined where no point's tail chunks vary other than along a line in the offset (nothing to fit) */
  us_per_chunk?: number;
  /** the phased points fitted, and their contexts */
  points: number;
  contexts: number;
  /** rms residuals over those contexts (divided by their count), each point's level and slope in blocks fitted: without the tail term, with it */
  rms_without_us: number;
  rms_with_us: number;
  max_with_us: number;
}

/**
 * us_per_chunk from the phased chain points: each point's contexts (the context itself and its
 * offsets) fitted as level + slope x offset + us_per_chunk x tail chunks, the level and slope per
 * point, us_per_chunk shared (the least-squares value after each point's level and slope are taken
 * out of both sides).
 */
export function fitTailWave(chains: readonly ChainPoint[], rule: WavesRule, blockTokens: number): TailWaveFit {
  const groups: { off: number[]; x: number[]; y: number[] }[] = [];
  for (const c of chains) {
    if (!c.phases?.length || !c.around_us || c.us_at_context === undefined) continue;
    const off = [0, ...c.phases];
    groups.push({ off, x: off.map((k) => tailChunks(c.tokens + k * blockTokens, rule)), y: [c.us_at_context, ...c.around_us] });
  }
  // each group's values less their least-squares line in the offset
  const detrend = (off: number[], v: number[]) => {
    const n = off.length;
    const mo = off.reduce((a, b) => a + b, 0) / n;
    const mv = v.reduce((a, b) => a + b, 0) / n;
    let sov = 0;
    let soo = 0;
    for (let i = 0; i < n; i++) {
      sov += (off[i] - mo) * (v[i] - mv);
      soo += (off[i] - mo) ** 2;
    }
    const slope = soo > 0 ? sov / soo : 0;
    return v.map((x, i) => x - mv - slope * (off[i] - mo));
  };
  let sxy = 0;
  let sxx = 0;
  const rs = groups.map((g) => ({ rx: detrend(g.off, g.x), ry: detrend(g.off, g.y) }));
  for (const { rx, ry } of rs) {
    for (let i = 0; i < rx.length; i++) {
      sxy += rx[i] * ry[i];
      sxx += rx[i] * rx[i];
    }
  }
  const contexts = rs.reduce((a, r) => a + r.rx.length, 0);
  const l = sxx > 1e-12 ? sxy / sxx : undefined;
  let s0 = 0;
  let s1 = 0;
  let m1 = 0;
  for (const { rx, ry } of rs) {
    for (let i = 0; i < rx.length; i++) {
      s0 += ry[i] ** 2;
      const e = ry[i] - (l ?? 0) * rx[i];
      s1 += e * e;
      m1 = Math.max(m1, Math.abs(e));
    }
  }
  const rms = (s: number) => (contexts > 0 ? Math.sqrt(s / contexts) : 0);
  return { ...(l !== undefined ? { us_per_chunk: l } : {}), points: groups.length, contexts, rms_without_us: rms(s0), rms_with_us: rms(s1), max_with_us: m1 };
}

/**
 * The chain points with the tail wave taken out: a phased point's chain time less us_per_chunk x the
 * mean tail chunks over the contexts its time is the mean of, a point timed at its context alone less
 * that context's tail.
 */
export function withoutTailWave<C extends ChainPoint>(chains: readonly C[], w: WavesRule & Pick<AttentionWaves, 'us_per_chunk'>, blockTokens: number): C[] {
  return chains.map((c) => {
    const at = c.phases?.length ? c.phases.map((k) => c.tokens + k * blockTokens) : [c.tokens];
    const mean = at.reduce((a, t) => a + tailChunks(t, w), 0) / at.length;
    const less = w.us_per_chunk * mean;
    return less === 0 ? c : { ...c, chain_us_per_layer: c.chain_us_per_layer - less, us: Math.max(0.01, c.us - less) };
  });
}

/** What a calibration made of the tail wave: the profile's field where it is priced, else why not. */
export interface TailWaveResult {
  waves?: AttentionWaves;
  rule?: WavesRule;
  fit?: TailWaveFit;
  /** why the profile has no attention_waves */
  reason?: string;
}

/**
 * The tail wave from a calibration's measurements: the rule from the recorded plans, us_per_chunk
 * fitted over the phased chains (rounded to 0.001 us), priced where it comes out above 0, for FP16 and
 * the kernels whose plans follow the same rule (kernelsFollowing).
 */
export function tailWaveOf(m: { attention_in_situ: readonly ChainPoint[]; kernels_in_situ?: readonly (ChainPoint & { precision: string })[]; multiprocessors?: number }, blockTokens: number): TailWaveResult {
  const { rule, reason } = wavesRuleOf(m.attention_in_situ, m.multiprocessors ?? 0);
  if (!rule) return { reason };
  const fit = fitTailWave(m.attention_in_situ, rule, blockTokens);
  if (fit.us_per_chunk === undefined) return { rule, fit, reason: 'no timed context around a point differs from the others in its tail wave' };
  const us = Math.round(fit.us_per_chunk * 1000) / 1000;
  if (!(us > 0)) return { rule, fit, reason: `the fitted time per chunk is not above 0 (${fit.us_per_chunk.toFixed(3)} us)` };
  return { rule, fit, waves: { ...rule, us_per_chunk: us, kernels: kernelsFollowing(rule, m.kernels_in_situ ?? [], m.multiprocessors ?? 0) } };
}
