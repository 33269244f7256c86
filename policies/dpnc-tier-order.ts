/**
 * DPNC's backing-tier pages in order of value, kept as they move. A page's value at step t is
 * max(0, score) / mx / (1 + max(0, t − u)), where u is the step its idleness counts from (its last
 * use, else its birth; NONE: it counts as 0) and mx the layer's largest score. A page below HBM is
 * not attended, so its u does not change there, and its score is raw + offset where every
 * unattended block's raw moves by the same subtraction at each observation: the order of raw among
 * such pages never turns over (equal raws stay equal; different ones may become equal). So among
 * pages of one u the order of value is the order of raw at any t, and each (layer, tier) keeps its
 * pages in groups by u, each sorted by (raw, block): the next page of a visit in order of
 * (value, block) is the first page of some group, not found by looking at every page.
 *
 * Pages of equal raw form a run in a group. One made of pages that had equal raws when each arrived
 * is sorted by block; one where different raws became equal may not be, and is sorted when it comes
 * first (each entry carries the id of the run it arrived in: a run whose first and last ids differ
 * was made by such a merge).
 */

/** no step: the page's idleness counts as 0 */
export const NONE = -0x7fffffff;

interface Group {
  layer: number;
  tier: number;
  u: number;
  /** its pages from `start` to `end`, sorted by (raw, block), and the id of the run each arrived in */
  blocks: Int32Array;
  runs: Int32Array;
  start: number;
  end: number;
}

/** How a visit values pages. */
export interface TierValuation {
  t: number;
  /** the layer's largest score */
  mx: number;
  /** the page's score now (the value's numerator, before max(0, ·)) and its raw score (the order) */
  score: (b: number) => number;
  raw: (b: number) => number;
  /** visit only pages due for demotion: idle for ageSteps steps or more, or of importance below lowImportance */
  due: { ageSteps: number; lowImportance: number } | null;
}

export class TierOrder {
  /** per page: its group (null: in none) */
  private readonly groupOf: (Group | null)[];
  /** per (layer, tier): its groups, and by u */
  private readonly groups: Group[][];
  private readonly byU: Map<number, Group>[];
  private runIds = 0;
  // per group index of one visit: its first page (-1: none to visit) and that page's value
  private headB = new Int32Array(16);
  private headV = new Float64Array(16);

  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    readonly tiers: number,
  ) {
    this.groupOf = new Array<Group | null>(layers * maxBlocks).fill(null);
    this.groups = Array.from({ length: layers * tiers }, () => []);
    this.byU = Array.from({ length: layers * tiers }, () => new Map());
  }

  /** Page (l, b) is now in `tier` with idleness from step u (NONE: none); raw(b): the raw scores of layer l's pages now. */
  place(l: number, b: number, tier: number, u: number, raw: (b: number) => number): void {
    this.leave(l, b, raw);
    const lt = l * this.tiers + tier;
    let g = this.byU[lt].get(u);
    if (g === undefined) {
      g = { layer: l, tier, u, blocks: new Int32Array(8), runs: new Int32Array(8), start: 0, end: 0 };
      this.byU[lt].set(u, g);
      this.groups[lt].push(g);
    }
    if (g.end === g.blocks.length) {
      // to the front; grown when over half full
      const n = g.end - g.start;
      const size = 2 * n >= g.blocks.length ? 2 * g.blocks.length : g.blocks.length;
      const blocks = new Int32Array(size);
      const runs = new Int32Array(size);
      blocks.set(g.blocks.subarray(g.start, g.end));
      runs.set(g.runs.subarray(g.start, g.end));
      g.blocks = blocks;
      g.runs = runs;
      g.start = 0;
      g.end = n;
    }
    const r = raw(b);
    // after the pages of lower (raw, block): most often every page of the group (the last one is
    // compared first), else found by bisection
    let lo = g.start;
    let hi = g.end;
    const rLast = hi > lo ? raw(g.blocks[hi - 1]) : r;
    if (hi > lo && (rLast < r || (rLast === r && g.blocks[hi - 1] < b))) lo = hi;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const rm = raw(g.blocks[mid]);
      if (rm < r || (rm === r && g.blocks[mid] < b)) lo = mid + 1;
      else hi = mid;
    }
    let run: number;
    if (lo === g.end && lo > g.start) {
      if (rLast === r) run = g.runs[lo - 1];
      else run = ++this.runIds;
    } else if (lo > g.start && raw(g.blocks[lo - 1]) === r) run = g.runs[lo - 1];
    else if (lo < g.end && raw(g.blocks[lo]) === r) run = g.runs[lo];
    else run = ++this.runIds;
    g.blocks.copyWithin(lo + 1, lo, g.end);
    g.runs.copyWithin(lo + 1, lo, g.end);
    g.blocks[lo] = b;
    g.runs[lo] = run;
    g.end++;
    this.groupOf[l * this.maxBlocks + b] = g;
  }

  /** Page (l, b) left its tier (to HBM, or to one not kept here); raw as for place(). */
  leave(l: number, b: number, raw: (b: number) => number): void {
    const i = l * this.maxBlocks + b;
    const g = this.groupOf[i];
    if (g === null) return;
    this.groupOf[i] = null;
    let at = g.start;
    if (g.blocks[at] !== b) {
      // its run: the pages of its raw (found by bisection), then the page itself
      const r = raw(b);
      let lo = g.start;
      let hi = g.end;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (raw(g.blocks[mid]) < r) lo = mid + 1;
        else hi = mid;
      }
      at = lo;
      while (at < g.end && g.blocks[at] !== b) at++;
      if (at === g.end) throw new Error(`tier order: layer ${l} block ${b} is not where its raw score puts it`);
    }
    if (at === g.start) g.start++;
    else {
      g.blocks.copyWithin(at, at + 1, g.end);
      g.runs.copyWithin(at, at + 1, g.end);
      g.end--;
    }
    if (g.start === g.end) {
      const lt = g.layer * this.tiers + g.tier;
      this.byU[lt].delete(g.u);
      const list = this.groups[lt];
      list.splice(list.indexOf(g), 1);
    }
  }

  /**
   * Call visit(ctx, b) for the pages of (l, tier) (due ones only, with `v.due`) in order of (value at
   * v.t, block), ascending, while visit moves the page out of the tier (through leave()) and returns
   * true. Returns -1 when it returned false or the pages ran out, else the page visit left in place
   * (the caller goes on without this order from there). (The caller's state comes as `ctx`, so that
   * one function serves every caller instance.)
   */
  visit<C>(l: number, tier: number, v: TierValuation, visit: (ctx: C, b: number) => boolean, ctx: C): number {
    const gs = this.groups[l * this.tiers + tier];
    if (this.headB.length < gs.length) {
      this.headB = new Int32Array(2 * gs.length);
      this.headV = new Float64Array(2 * gs.length);
    }
    const n = gs.length;
    const list = gs.slice();
    for (let k = 0; k < n; k++) this.head(list[k], k, v);
    for (;;) {
      let best = -1;
      for (let k = 0; k < n; k++) {
        if (this.headB[k] < 0) continue;
        if (best < 0 || this.headV[k] < this.headV[best] || (this.headV[k] === this.headV[best] && this.headB[k] < this.headB[best])) best = k;
      }
      if (best < 0) return -1;
      const b = this.headB[best];
      const go = visit(ctx, b);
      if (this.groupOf[l * this.maxBlocks + b] === list[best]) return b;
      if (!go) return -1;
      this.head(list[best], best, v);
    }
  }

  /** group g's first page in order of (value, block) (index k of the visit): headB[k] (-1: none, or none due) and its value headV[k] */
  private head(g: Group, k: number, v: TierValuation): void {
    this.headB[k] = -1;
    if (g.start === g.end) return;
    // the run of the first page's raw comes first; sorted by block unless it was made by a merge
    const r = v.raw(g.blocks[g.start]);
    let lo = g.start + 1;
    let hi = g.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (v.raw(g.blocks[mid]) <= r) lo = mid + 1;
      else hi = mid;
    }
    const runEnd = lo;
    if (g.runs[g.start] !== g.runs[runEnd - 1]) {
      g.blocks.subarray(g.start, runEnd).sort();
      const run = ++this.runIds;
      for (let j = g.start; j < runEnd; j++) g.runs[j] = run;
    }
    const since = g.u === NONE ? 0 : v.t - g.u;
    const denom = 1 + Math.max(0, since);
    const allDue = v.due === null || since >= v.due.ageSteps;
    const low = v.due === null ? 0 : v.due.lowImportance;
    let b = g.blocks[g.start];
    let imp = Math.max(0, v.score(b)) / v.mx;
    // (importance rises along the group: past a page not due, none is)
    if (!allDue && !(imp < low)) return;
    const value = imp / denom;
    // a later raw of the same value (a score at or below 0, or divisions rounding alike): the lowest
    // block among every page of that value
    if (runEnd < g.end && Math.max(0, v.score(g.blocks[runEnd])) / v.mx / denom === value) {
      for (let j = runEnd; j < g.end; j++) {
        const bj = g.blocks[j];
        imp = Math.max(0, v.score(bj)) / v.mx;
        if ((!allDue && !(imp < low)) || imp / denom > value) break;
        if (bj < b) b = bj;
      }
    }
    this.headB[k] = b;
    this.headV[k] = value;
  }
}
