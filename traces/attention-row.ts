/**
 * One row of the generator: the attention of one (layer, KV group) over the KV blocks, step by step.
 *
 * The row's mass is a mix of components, each normalised on its own and weighted by its share:
 *   needle (retrieval layers, while active)  N
 *   sink tokens                              (1 - N) * S
 *   recent window (exponential decay)        (1 - N) * (1 - S) * c * window_share
 *   heavy hitters (Zipf over slots)          (1 - N) * (1 - S) * c * (1 - window_share)
 *   background (persistent lognormal)        (1 - N) * (1 - S) * (1 - c)
 * with S the layer's sink share and c its concentration. Heavy hitters are blocks outside the
 * sink and the window held in hh_count slots; each step a slot is replaced with probability
 * `random` (see turnoverBudget), a block leaving the window may join, and a topic shift moves
 * round(shift_fraction * hh_count) slots into a region of shift_span_blocks blocks.
 */
import seedrandom from 'seedrandom';
import { needleBlock, type GeneratorParams } from './generator-params.js';
import { NORMAL_TABLE_BITS, hash3 } from './hash-noise.js';

const TABLE_SHIFT = 32 - NORMAL_TABLE_BITS;
const NO_BLOCK = -1;

/** The layer's concentrated share: high - (high - low) * exp(-layer / concentration_layers). */
export function concentrationOf(p: GeneratorParams, layer: number): number {
  return p.concentration_high - (p.concentration_high - p.concentration_low) * Math.exp(-layer / p.concentration_layers);
}

export class AttentionRow {
  private readonly rng: seedrandom.PRNG;
  private readonly bgKey: number;
  private readonly jitKey: number;
  private readonly hhKey: number;
  private readonly sinkShare: number;
  private readonly concentration: number;
  private readonly retrieval: boolean;
  private readonly needle: number;
  private readonly zipf: Float64Array;
  private readonly slots: Int32Array;
  private active = 0;
  private readonly isHH: Uint8Array;
  /** log of the persistent background weight of each block */
  private readonly bgLog: Float64Array;
  /** AR(1) jitter state (standard normal) of each block's background weight and each heavy-hitter slot */
  private readonly bgZ: Float64Array;
  private readonly hhZ: Float64Array;
  private bgFilled = 0;
  private readonly decay: Float64Array;
  private readonly replaceProb: number;

  constructor(
    private readonly p: GeneratorParams,
    readonly layer: number,
    row: number,
    keys: { bg: number; jit: number; hh: number },
    private readonly normals: Float64Array,
    maxBlocks: number,
    replaceProb: number,
  ) {
    this.rng = seedrandom(`${String(p.seed)}/row/${row}`);
    this.bgKey = keys.bg;
    this.jitKey = keys.jit;
    this.hhKey = keys.hh;
    this.sinkShare = layer < p.sink_low_layers ? p.sink_mass * p.sink_low_factor : p.sink_mass;
    this.concentration = concentrationOf(p, layer);
    this.retrieval = p.needle !== null && p.needle.layers.includes(layer);
    this.needle = p.needle === null ? NO_BLOCK : needleBlock(p.needle, p);
    this.zipf = new Float64Array(p.hh_count);
    for (let r = 0; r < p.hh_count; r++) this.zipf[r] = 1 / (r + 1) ** p.zipf_alpha;
    this.slots = new Int32Array(p.hh_count).fill(NO_BLOCK);
    this.isHH = new Uint8Array(maxBlocks);
    this.bgLog = new Float64Array(maxBlocks);
    this.bgZ = new Float64Array(maxBlocks);
    this.hhZ = new Float64Array(p.hh_count);
    this.decay = new Float64Array(p.window_tokens);
    for (let d = 0; d < p.window_tokens; d++) this.decay[d] = Math.exp(-d / p.window_decay_tokens);
    this.replaceProb = Math.max(0, replaceProb);
  }

  /**
   * Advance the row's state to step `s` (context `ctx` tokens; call once per step, in order) and
   * write its weights for blocks 0 .. nBlocks-1 into out; returns their sum (1 up to rounding).
   * `shiftAt` is the topic region's position (fraction of the candidates) when a shift happens now.
   */
  weights(s: number, ctx: number, prevCtx: number, shiftAt: number | null, out: Float64Array): number {
    const p = this.p;
    const bs = p.block_size;
    const n = Math.ceil(ctx / bs);
    const winStart = Math.max(0, ctx - p.window_tokens);
    const firstWinBlock = Math.floor(winStart / bs);
    this.fillBackground(n);
    if (s === 0) this.initHeavyHitters(firstWinBlock);
    else this.evolve(firstWinBlock, Math.floor(Math.max(0, prevCtx - p.window_tokens) / bs), shiftAt);

    // shares
    const needleOn = this.retrieval && s >= p.needle!.from_step && s < p.needle!.from_step + p.needle!.steps;
    const N = needleOn ? p.needle!.mass : 0;
    const nSink = Math.min(p.sink_tokens, ctx);
    const S = nSink > 0 ? this.sinkShare : 0;
    const rest = (1 - N) * (1 - S);
    const conc = rest * this.concentration;
    const winShare = conc * p.window_share;
    let hhShare = conc - winShare;
    let bgShare = rest - conc;
    if (this.active === 0) {
      bgShare += hhShare;
      hhShare = 0;
    }

    // background: persistent lognormal base x AR(1) lognormal jitter
    this.advanceJitter(s, n);
    const bgLog = this.bgLog;
    const bgZ = this.bgZ;
    const sj = p.background_jitter;
    let sumBg = 0;
    for (let b = 0; b < n; b++) {
      const v = Math.exp(bgLog[b]! + sj * bgZ[b]!);
      out[b] = v;
      sumBg += v;
    }
    const fb = sumBg > 0 ? bgShare / sumBg : 0;
    for (let b = 0; b < n; b++) out[b]! *= fb;

    const sinkShare = (1 - N) * S;
    if (sinkShare > 0) for (let t = 0; t < nSink; t++) out[Math.floor(t / bs)]! += sinkShare / nSink;

    const nWin = ctx - winStart;
    let sumWin = 0;
    for (let d = 0; d < nWin; d++) sumWin += this.decay[d]!;
    for (let d = 0; d < nWin; d++) out[Math.floor((ctx - 1 - d) / bs)]! += (winShare * this.decay[d]!) / sumWin;

    if (hhShare > 0) {
      const hz = this.hhZ;
      const sj = p.hh_jitter;
      let sumHH = 0;
      for (let j = 0; j < this.active; j++) sumHH += this.zipf[j]! * Math.exp(sj * hz[j]!);
      const f = hhShare / sumHH;
      for (let j = 0; j < this.active; j++) out[this.slots[j]!]! += f * this.zipf[j]! * Math.exp(sj * hz[j]!);
    }
    if (N > 0) out[this.needle]! += N;

    let total = 0;
    for (let b = 0; b < n; b++) total += out[b]!;
    return total;
  }

  /** Current heavy-hitter blocks (for tests and debugging). */
  heavyHitters(): number[] {
    return Array.from(this.slots.subarray(0, this.active));
  }

  /** Give blocks that appeared since the last step their base weight and a stationary jitter state. */
  private fillBackground(n: number): void {
    const z = this.normals;
    const sigma = this.p.background_sigma;
    for (let b = this.bgFilled; b < n; b++) {
      // the needle is ignored (x 1e-3) until it is retrieved
      this.bgLog[b] = sigma * z[hash3(this.bgKey, b, 0x51ed27) >>> TABLE_SHIFT]! + (b === this.needle ? Math.log(1e-3) : 0);
      this.bgZ[b] = z[hash3(this.jitKey, b, 0x3c6ef372) >>> TABLE_SHIFT]!;
    }
    this.bgFilled = Math.max(this.bgFilled, n);
  }

  /** z <- rho z + sqrt(1 - rho^2) e for the background blocks and the heavy-hitter slots (stationary N(0, 1)). */
  private advanceJitter(s: number, n: number): void {
    const z = this.normals;
    const hz = this.hhZ;
    if (s === 0) {
      for (let j = 0; j < hz.length; j++) hz[j] = z[hash3(this.hhKey, j, 0x1b873593) >>> TABLE_SHIFT]!;
      return;
    }
    const rho = this.p.jitter_corr;
    const e = Math.sqrt(1 - rho * rho);
    const bz = this.bgZ;
    const key = this.jitKey;
    for (let b = 0; b < n; b++) bz[b] = rho * bz[b]! + e * z[hash3(key, b, s) >>> TABLE_SHIFT]!;
    for (let j = 0; j < hz.length; j++) hz[j] = rho * hz[j]! + e * z[hash3(this.hhKey, j, s) >>> TABLE_SHIFT]!;
  }

  /** Step 0: hh_count distinct candidates, uniformly (a partial Fisher-Yates shuffle). */
  private initHeavyHitters(firstWinBlock: number): void {
    const cand: number[] = [];
    for (let b = 1; b < firstWinBlock; b++) if (b !== this.needle) cand.push(b);
    this.active = Math.min(this.p.hh_count, cand.length);
    for (let j = 0; j < this.active; j++) {
      const r = j + Math.floor(this.rng.quick() * (cand.length - j));
      const b = cand[r]!;
      cand[r] = cand[j]!;
      this.setSlot(j, b);
    }
  }

  private evolve(firstWinBlock: number, prevFirstWinBlock: number, shiftAt: number | null): void {
    const p = this.p;
    const rng = this.rng;
    for (let j = 0; j < this.active; j++) {
      if (rng.quick() < this.replaceProb) this.replace(j, this.drawBlock(firstWinBlock, 1, firstWinBlock, 64));
    }
    // blocks that left the window may join the heavy hitters
    for (let b = Math.max(1, prevFirstWinBlock); b < firstWinBlock; b++) {
      if (this.active > 0 && rng.quick() < p.join_prob && !this.isHH[b] && b !== this.needle) {
        this.replace(Math.floor(rng.quick() * this.active), b);
      }
    }
    if (shiftAt !== null && this.active > 0) this.shift(firstWinBlock, shiftAt);
  }

  /**
   * Topic shift: round(shift_fraction * hh_count) random slots move to distinct free blocks of one
   * region of shift_span_blocks blocks (widened one block at a time while it lacks free blocks).
   */
  private shift(firstWinBlock: number, shiftAt: number): void {
    const p = this.p;
    const rng = this.rng;
    const k = Math.min(this.active, Math.round(p.shift_fraction * p.hh_count));
    const cand = firstWinBlock - 1; // blocks 1 .. firstWinBlock-1
    if (k === 0 || cand <= 0) return;
    const span = Math.min(p.shift_span_blocks, cand);
    let lo = 1 + Math.min(cand - span, Math.floor(shiftAt * (cand - span + 1)));
    let hi = lo + span;
    const free = (b: number) => !this.isHH[b] && b !== this.needle;
    const pool: number[] = [];
    for (let b = lo; b < hi; b++) if (free(b)) pool.push(b);
    for (let side = 0; pool.length < k && (lo > 1 || hi < firstWinBlock); side ^= 1) {
      if (side === 0 && lo > 1) {
        if (free(--lo)) pool.push(lo);
      } else if (hi < firstWinBlock) {
        if (free(hi)) pool.push(hi);
        hi++;
      }
    }
    // k distinct slots and k distinct blocks by partial Fisher-Yates shuffles
    const slots = Array.from({ length: this.active }, (_, i) => i);
    for (let i = 0; i < k && i < pool.length; i++) {
      const r = i + Math.floor(rng.quick() * (slots.length - i));
      [slots[i], slots[r]] = [slots[r]!, slots[i]!];
      const q = i + Math.floor(rng.quick() * (pool.length - i));
      [pool[i], pool[q]] = [pool[q]!, pool[i]!];
      this.replace(slots[i]!, pool[i]!);
    }
  }

  /** A random block in [lo, hi) ∩ candidates that is no heavy hitter and not the needle, or NO_BLOCK. */
  private drawBlock(firstWinBlock: number, lo: number, hi: number, tries: number): number {
    hi = Math.min(hi, firstWinBlock);
    if (hi <= lo) return NO_BLOCK;
    for (let t = 0; t < tries; t++) {
      const b = lo + Math.floor(this.rng.quick() * (hi - lo));
      if (!this.isHH[b] && b !== this.needle) return b;
    }
    return NO_BLOCK;
  }

  private replace(slot: number, b: number): void {
    if (b === NO_BLOCK) return;
    this.isHH[this.slots[slot]!] = 0;
    this.setSlot(slot, b);
  }

  private setSlot(slot: number, b: number): void {
    this.slots[slot] = b;
    if (b !== NO_BLOCK) this.isHH[b] = 1;
  }
}
