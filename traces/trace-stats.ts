/**
 * Statistics of an attention trace, per layer: computed per KV-head group (each row of a step is one
 * (layer, group), row = layer * kv_groups + group) and averaged over steps and groups:
 *  - sinkMass: mass on block 0
 *  - coverBlocks / coverTokens: blocks (and blocks x block_size tokens) needed to cover 50/90/99%
 *    of the row's mass (within 1e-6, for float32 rounding), taking the heaviest blocks first
 *  - sparsity: share of blocks with mass < sparseThreshold (1%) of the row's maximum
 *  - persistence: |A ∩ B| / |A| for the top set A at step s-1 and B at step s; the top set is the
 *    topBlocks (or round(topFraction * nBlocks), default 10%) heaviest blocks, ties to lower indices
 *  - entropyNats: -sum m ln m over blocks
 *  - recentMass: mass on the last 1, 4 and 16 blocks
 * With topk encoding, the remainder is treated as spread evenly over the unlisted blocks, and the
 * top set is capped at the listed blocks (an unlisted block's own mass is unknown).
 */
import type { TraceEncoding, TraceHeader, TraceStep } from './format.js';
import { openTrace } from './trace-reader.js';

export interface TraceStatsOptions {
  /** top-set size as a share of nBlocks for persistence; default 0.1 */
  topFraction?: number;
  /** top-set size in blocks (overrides topFraction) */
  topBlocks?: number;
  /** a block is "sparse" when its mass < sparseThreshold x the row's max; default 0.01 */
  sparseThreshold?: number;
  /** for a bare step iterator (a path or a reader gives these from the header); defaults 16 and 1 */
  blockSize?: number;
  kvGroups?: number;
  /** stop after this many steps */
  maxSteps?: number;
}

export interface CoverStats {
  p50: number;
  p90: number;
  p99: number;
}

export interface LayerStats {
  layer: number;
  /** (step, group) rows averaged */
  rows: number;
  sinkMass: number;
  coverBlocks: CoverStats;
  coverTokens: CoverStats;
  sparsity: number;
  /** null with fewer than two steps */
  persistence: number | null;
  entropyNats: number;
  recentMass: { last1: number; last4: number; last16: number };
}

export interface TraceStats {
  source: string;
  steps: number;
  encoding: TraceEncoding | 'unknown';
  blockSize: number;
  kvGroups: number;
  /** how the top set was sized */
  top: { fraction: number; blocks: number | null };
  sparseThreshold: number;
  /** true for topk traces: the remainder was spread evenly over the unlisted blocks */
  remainderSpread: boolean;
  layers: LayerStats[];
}

export type TraceStatsSource = string | Iterable<TraceStep> | { header: TraceHeader; [Symbol.iterator](): Iterator<TraceStep> };

const COVER = [0.5, 0.9, 0.99] as const;
const RECENT = [1, 4, 16] as const;

/** Per-row accumulators and the top-set marks carried from step to step. */
class RowAccumulator {
  rows = 0;
  sink = 0;
  cover = [0, 0, 0];
  sparse = 0;
  entropy = 0;
  recent = [0, 0, 0];
  persistSum = 0;
  persistN = 0;
  /** marks[b] = index of the last step at which block b was in the top set */
  marks = new Int32Array(0).fill(-2);
  prevTop = 0;
}

export function computeTraceStats(source: TraceStatsSource, options: TraceStatsOptions = {}): TraceStats {
  if (typeof source === 'string') {
    const reader = openTrace(source);
    try {
      return statsOf(source, reader.header, reader, options);
    } finally {
      reader.close();
    }
  }
  const header = 'header' in source ? (source as { header: TraceHeader }).header : null;
  return statsOf('steps', header, source, options);
}

function statsOf(name: string, header: TraceHeader | null, steps: Iterable<TraceStep>, o: TraceStatsOptions): TraceStats {
  const topFraction = o.topFraction ?? 0.1;
  const topBlocks = o.topBlocks ?? null;
  const sparseThreshold = o.sparseThreshold ?? 0.01;
  if (!(topFraction > 0 && topFraction <= 1)) throw new Error(`computeTraceStats: topFraction must be in (0, 1], got ${topFraction}`);
  if (topBlocks !== null && !(Number.isInteger(topBlocks) && topBlocks >= 1)) {
    throw new Error(`computeTraceStats: topBlocks must be an integer >= 1, got ${topBlocks}`);
  }
  const blockSize = header?.block_size ?? o.blockSize ?? 16;
  const kvGroups = header?.kv_groups ?? o.kvGroups ?? 1;
  const maxSteps = o.maxSteps ?? Infinity;
  let acc: RowAccumulator[] = [];
  let sorted = new Float64Array(0);
  let encoding: TraceEncoding | 'unknown' = header?.encoding ?? 'unknown';
  let nSteps = 0;
  for (const step of steps) {
    if (nSteps >= maxSteps) break;
    if (acc.length === 0) acc = step.layers.map(() => new RowAccumulator());
    if (step.layers.length !== acc.length) {
      throw new Error(`computeTraceStats: ${name}: step ${step.step} has ${step.layers.length} layers, step 0 had ${acc.length}`);
    }
    for (let r = 0; r < acc.length; r++) {
      const a = step.layers[r]!;
      const n = a.nBlocks;
      if (sorted.length < n) sorted = new Float64Array(Math.max(n, 2 * sorted.length));
      if (header === null) encoding = a.idx === null ? 'dense' : 'topk';
      rowStats(acc[r]!, a.idx, a.mass, a.remainder, n, nSteps, sorted, topBlocks ?? Math.max(1, Math.round(topFraction * n)), sparseThreshold);
    }
    nSteps++;
  }
  const layersN = Math.ceil(acc.length / kvGroups);
  const layers: LayerStats[] = [];
  for (let l = 0; l < layersN; l++) {
    const group = acc.slice(l * kvGroups, (l + 1) * kvGroups);
    const rows = group.reduce((s, g) => s + g.rows, 0);
    const mean = (f: (g: RowAccumulator) => number) => group.reduce((s, g) => s + f(g), 0) / rows;
    const persistN = group.reduce((s, g) => s + g.persistN, 0);
    // each group's persistence, then the mean over the groups that have one
    const cover = { p50: mean((g) => g.cover[0]!), p90: mean((g) => g.cover[1]!), p99: mean((g) => g.cover[2]!) };
    layers.push({
      layer: l,
      rows,
      sinkMass: mean((g) => g.sink),
      coverBlocks: cover,
      coverTokens: { p50: cover.p50 * blockSize, p90: cover.p90 * blockSize, p99: cover.p99 * blockSize },
      sparsity: mean((g) => g.sparse),
      persistence: persistN === 0 ? null : meanOfGroups(group),
      entropyNats: mean((g) => g.entropy),
      recentMass: { last1: mean((g) => g.recent[0]!), last4: mean((g) => g.recent[1]!), last16: mean((g) => g.recent[2]!) },
    });
  }
  return {
    source: name,
    steps: nSteps,
    encoding,
    blockSize,
    kvGroups,
    top: { fraction: topFraction, blocks: topBlocks },
    sparseThreshold,
    remainderSpread: encoding === 'topk',
    layers,
  };
}

/** Mean over the groups (with at least one step pair) of each group's mean persistence. */
function meanOfGroups(group: RowAccumulator[]): number {
  const has = group.filter((g) => g.persistN > 0);
  return has.reduce((s, g) => s + g.persistSum / g.persistN, 0) / has.length;
}

/**
 * One (step, row). Listed masses are sorted ascending into `sorted`; the u unlisted blocks each
 * weigh uv = remainder / u and are merged in where they fall.
 */
function rowStats(
  acc: RowAccumulator,
  idx: Uint32Array | null,
  mass: Float32Array,
  remainder: number,
  n: number,
  s: number,
  sorted: Float64Array,
  topWanted: number,
  sparseThreshold: number,
): void {
  const k = mass.length;
  const u = n - k;
  const uv = u > 0 ? remainder / u : 0;
  let total = u > 0 ? remainder : 0;
  let entropy = u > 0 && uv > 0 ? -u * uv * Math.log(uv) : 0;
  let sink = uv;
  const recent = [0, 0, 0];
  const recentListed = [0, 0, 0];
  for (let i = 0; i < k; i++) {
    const v = mass[i]!;
    sorted[i] = v;
    total += v;
    if (v > 0) entropy -= v * Math.log(v);
    const b = idx === null ? i : idx[i]!;
    if (b === 0) sink = v;
    for (let j = 0; j < RECENT.length; j++) {
      if (b >= n - RECENT[j]!) {
        recent[j]! += v;
        recentListed[j]!++;
      }
    }
  }
  const view = sorted.subarray(0, k);
  view.sort();
  for (let j = 0; j < RECENT.length; j++) recent[j]! += (Math.min(RECENT[j]!, n) - recentListed[j]!) * uv;

  // coverage: heaviest first, the unlisted group merged in at its value
  for (let c = 0; c < COVER.length; c++) acc.cover[c]! += coverCount(view, u, uv, (COVER[c]! - 1e-6) * total);

  // sparsity
  const max = Math.max(k > 0 ? view[k - 1]! : 0, uv);
  const thr = sparseThreshold * max;
  let sparse = 0;
  for (let i = 0; i < k && view[i]! < thr; i++) sparse++;
  if (uv < thr) sparse += u;

  // persistence of the top set
  const m = Math.min(topWanted, k);
  if (acc.marks.length < n) {
    const grown = new Int32Array(Math.max(n, 2 * acc.marks.length)).fill(-2);
    grown.set(acc.marks);
    acc.marks = grown;
  }
  if (m > 0) {
    const cut = view[k - m]!;
    let above = 0;
    for (let i = k - 1; i >= 0 && view[i]! > cut; i--) above++;
    const ties = m - above;
    // blocks tied at the cut: the lowest block indices get the remaining places
    const tied: number[] = [];
    for (let i = 0; i < k; i++) if (mass[i]! === cut) tied.push(idx === null ? i : idx[i]!);
    if (tied.length > ties) tied.sort((x, y) => x - y).length = ties;
    let inter = 0;
    const marks = acc.marks;
    const take = (b: number) => {
      if (marks[b] === s - 1) inter++;
      marks[b] = s;
    };
    for (let i = 0; i < k; i++) if (mass[i]! > cut) take(idx === null ? i : idx[i]!);
    for (const b of tied) take(b);
    if (s > 0 && acc.prevTop > 0) {
      acc.persistSum += inter / acc.prevTop;
      acc.persistN++;
    }
  }
  acc.prevTop = m;

  acc.rows++;
  acc.sink += sink;
  acc.sparse += sparse / n;
  acc.entropy += entropy;
  for (let j = 0; j < RECENT.length; j++) acc.recent[j]! += recent[j]!;
}

/** Smallest number of blocks, heaviest first, whose mass reaches goal. */
function coverCount(ascending: Float64Array, u: number, uv: number, goal: number): number {
  let acc = 0;
  let count = 0;
  let i = ascending.length - 1;
  let unlistedUsed = u === 0 || uv === 0;
  while (acc < goal) {
    if (!unlistedUsed && (i < 0 || ascending[i]! < uv)) {
      const need = Math.max(1, Math.ceil((goal - acc) / uv));
      if (need <= u) return count + need;
      acc += u * uv;
      count += u;
      unlistedUsed = true;
    } else if (i >= 0) {
      acc += ascending[i--]!;
      count++;
    } else {
      break;
    }
  }
  return count;
}

export { formatTraceStats } from './format-trace-stats.js';
