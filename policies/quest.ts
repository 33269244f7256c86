/**
 * Quest (Tang et al., "Quest: Query-Aware Sparsity for Efficient Long-Context LLM Inference",
 * ICML 2024): nothing is evicted; at each decode step each layer attends only the top-K pages by a
 * query-aware criticality estimate, page score = Σ_i max(q_i·min_i, q_i·max_i) over the page's
 * per-channel key min/max (an upper bound of q·k in the page); the first two layers stay dense.
 *
 * Approximations (the trace has no query or key vectors): a page is a 16-token block; its estimate is
 * the attention mass it received the last time it was attended in this layer (a stale, query-blind
 * stand-in for the per-step bound; pages skipped since keep that value, so they can come back when
 * the attended pages cool down), ties broken by the block's key norm (larger ‖K‖ bounds a larger
 * q·k, Cauchy–Schwarz); the newest page (the query's own) is always selected. K = budget pages
 * (token_budget = budget × block size). Quest keeps the whole KV in HBM; at an HBM budget below the
 * KV size the unselected pages live in DRAM (FP16) and a selected page that is not resident is
 * promoted before the layer runs (a stall: the selection depends on the layer's query), replacing
 * the resident page with the lowest estimate. Dense layers keep their lowest-estimate pages in DRAM
 * and stream them one layer ahead.
 *
 * Per head, as in the paper (each head selects its own top-K pages), at the granularity of KV-head
 * groups: each group keeps its own estimates (its last observed mass, its own key norms for the
 * tie-break), and a layer attends the union of the groups' top pages taken rank by rank
 * (group-rank.ts) within the same K pages; the pages left in DRAM are the ones ranked worst.
 */
import { Buffer } from 'node:buffer';
import { checkLowerTier } from './lower-tier.js';
import type { Actions, GroupAttention, Observation, Policy, PolicyDefinition, PolicySetup, PolicyView } from './policy.js';
import { bestGroupRank } from './group-rank.js';
import { selectAt, selectBottomKKeyed, selectBottomKSet } from './quickselect.js';
import { lowerBound } from '../common/lower-bound.js';

interface Options extends Record<string, unknown> {
  budget_factor: number;
  dense_layers: number;
  offload_tier: string;
}

export const quest: PolicyDefinition<Options> = {
  name: 'quest',
  description:
    'Quest: query-aware sparse attention, top-K pages per layer by a page criticality estimate per KV-head group (here: last observed page mass, key-norm tie-break — the trace has no queries; the union of the groups\' top pages), nothing evicted, first two layers dense; unselected pages live in DRAM, selected ones are promoted.',
  source: 'Tang et al., Quest: Query-Aware Sparsity for Efficient Long-Context LLM Inference, ICML 2024',
  options: [
    { name: 'budget_factor', type: 'number', default: 1, min: 0, max: 2, description: 'pages attended per layer = this x the HBM budget in blocks' },
    { name: 'dense_layers', type: 'integer', default: 2, min: 0, description: 'the first layers attend every page' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier holding pages that do not fit HBM (FP16)' },
  ],
  create: (o, setup) => createQuest(o, setup),
};

/** Counts of a quest replay's decisions by how the selection was found (for tests). */
export interface QuestStats {
  /** selections changed at their boundary from the pages in key-norm order (selectByNorm) */
  byNorm: number;
  /** decisions whose promotions and unselected residents were listed by one pass over the blocks (splitByTier) */
  byScan?: number;
  /** full selections among the blocks at or above a sampled bound (fullBound), and those that fell back to every block */
  byBound?: number;
  boundMissed?: number;
  /** decisions whose unselected residents came from the selection's changes (unselectedSince) */
  bySince?: number;
  /** when given: the decisions where those differ from the residents' (unselectedOf), counted */
  sinceDiffers?: number;
}

/**
 * A quest policy. holdShares (default true): an observation that attended exactly the list holds the
 * uniform share of its pages as one value per layer (see lazyOn below); false writes it to every page
 * at every observation, the reference the held value is tested against. boundaryByNorm (default true,
 * with holdShares): a selection that changes at its boundary while the share is held is found from
 * the selected pages in key-norm order (selectByNorm); false selects it from every known candidate,
 * the reference it is tested against. scanMoves (default true): a decision with many pages to promote
 * lists them and the unselected residents in block order by one pass over the layer's blocks
 * (splitByTier); false sorts the lists, the reference it is tested against. boundFull (default true):
 * a selection from every block selects among the blocks at or above a sampled bound (fullBound);
 * false among every block, the reference it is tested against. unselFromChanges (default true): a
 * selection that changed at its boundary only, after a decision that left HBM holding exactly its
 * pages, lists the unselected residents from the pages that left it and the blocks created since
 * (unselectedSince); false from every resident, the reference it is tested against.
 */
export function createQuest(o: Options, setup: PolicySetup, holdShares = true, boundaryByNorm = true, stats?: QuestStats, scanMoves = true, boundFull = true, unselFromChanges = true): Policy {
  checkLowerTier('quest', 'offload_tier', o.offload_tier, setup.tiers);
  return new QuestPolicy(new QuestState(o, setup, holdShares, boundaryByNorm, stats, scanMoves, boundFull, unselFromChanges));
}

/** The policy: its decisions and observations are module functions of its state (one compiled copy for every replay in a process). */
class QuestPolicy implements Policy {
  readonly name = 'quest';
  readonly s: QuestState;
  constructor(s: QuestState) {
    this.s = s;
  }
  decide(v: PolicyView, act: Actions): void {
    questDecide(this.s, v, act);
  }
  observe(obs: Observation): void {
    questObserve(this.s, obs);
  }
}

/**
 * The state of one quest policy (a replay's): per layer and block, as the functions below use it. A
 * class whose constructor assigns every field (declared below, not initialized as class fields):
 * each replay's state then has the same hidden class with the same field types, so code compiled
 * for one replay's state serves the next (an object literal's fields are generalized when the
 * literal is created a second time, which discards that code).
 */
class QuestState {
  // the options: the pages attended per layer as a factor of the budget, the dense layers, the tier of the pages outside HBM
  declare readonly budgetFactor: number;
  declare readonly denseLayers: number;
  declare readonly offloadTier: string;
  declare readonly holdShares: boolean;
  declare readonly boundaryByNorm: boolean;
  declare readonly stats: QuestStats | undefined;
  declare readonly scanMoves: boolean;
  declare nUnsel: number;
  declare readonly boundFull: boolean;
  declare readonly unselFromChanges: boolean;
  declare readonly selOnly: Uint8Array;
  declare readonly selNewest: Int32Array;
  declare readonly sampleKeys: Float64Array;
  declare readonly sampleIds: Int32Array;
  declare readonly M: number;
  declare readonly L: number;
  declare readonly G: number;
  declare readonly lasts: Float64Array[];
  declare readonly last: Float64Array;
  declare readonly selOf: Int32Array;
  declare readonly selAt: Int32Array;
  declare readonly selN: Int32Array;
  declare readonly selViews: Int32Array[];
  declare nListed: number;
  declare readonly selIn: Uint8Array;
  declare readonly changesAt: Float64Array;
  declare readonly createdAt: Int32Array;
  declare readonly othKey: Float64Array;
  declare readonly othBlock: Int32Array;
  declare readonly normMin: Float64Array;
  declare readonly obsOk: Uint8Array;
  declare readonly obsU: Float64Array;
  declare readonly obsIdx: Int32Array;
  declare readonly obsIdxN: Int32Array;
  declare readonly obsAt: Int32Array;
  declare readonly rest: Int32Array;
  declare readonly restKeys: Float64Array;
  declare readonly cand: Int32Array;
  declare readonly promo: Int32Array;
  declare readonly listOk: Uint8Array;
  declare readonly listNewest: Int32Array;
  declare readonly added: Int32Array;
  declare readonly removed: Int32Array;
  declare nAdded: number;
  declare nRemoved: number;
  declare readonly lazyOn: Uint8Array;
  declare readonly lazyU: Float64Array;
  declare readonly lazyNewest: Int32Array;
  declare readonly lazyMark: Uint8Array;
  declare readonly byNorm: boolean;
  declare readonly ordValid: Uint8Array;
  declare readonly outList: Int32Array;
  declare readonly outN: Int32Array;
  declare readonly outValid: Uint8Array;
  declare readonly pend: Int32Array;
  declare readonly pendN: Int32Array;
  declare readonly allK: Float64Array;
  declare readonly allB: Int32Array;
  declare readonly allBits: Int32Array;
  declare readonly allBytes: Buffer[];
  declare readonly allN: Int32Array;
  declare readonly allOff: Uint8Array;
  declare readonly ordDirty: Float64Array;
  declare readonly floorKeyOf: Float64Array;
  declare readonly floorIdOf: Int32Array;
  declare listedAt: number;
  declare readonly keys: Float64Array;
  declare readonly known: Uint8Array;
  declare readonly knownList: Int32Array;
  declare readonly knownCount: Int32Array;
  declare readonly inKnown: Int32Array;
  declare readonly knownStamp: Int32Array;
  declare stamps: number;
  declare readonly knownEnd: Int32Array;
  declare readonly normSnap: Int32Array[];
  declare readonly snapPairs: Float64Array[];
  declare readonly snapBytes: Buffer[];
  declare readonly normBytes: Buffer[];
  declare readonly normsOf: (Float32Array | null)[];
  declare readonly normBits: Int32Array[];
  declare readonly normPairs: (Float64Array | null)[];
  declare readonly normsDirty: Float64Array;
  declare readonly changed: Int32Array;
  declare readonly rankOf: Float64Array;
  declare readonly rankTmp: Float64Array;
  declare readonly resList: Int32Array[];
  declare readonly resCount: Int32Array;
  declare readonly inRes: Uint8Array;
  declare readonly resSeen: Int32Array;
  declare readonly resPos: Int32Array;
  declare nPromo: number;

  constructor(o: Options, setup: PolicySetup, holdShares: boolean, boundaryByNorm: boolean, stats: QuestStats | undefined, scanMoves: boolean, boundFull: boolean, unselFromChanges: boolean) {
    const M = setup.maxBlocks;
    const L = setup.layers;
    const G = setup.header.kv_groups;
    // lasts[g][l*M + b]: group g's last observed mass on block b of layer l
    const lasts = Array.from({ length: G }, () => new Float64Array(L * M));
    const last = lasts[0];
    // per layer, its latest selection: the selected pages but the newest at selOf[l * M + i],
    // i < selN[l], then the newest (listed with them: selOf[l * M, l * M + selN[l] + 1)); selAt[l * M + b]
    // is b's position there (-1: not selected; the newest is not marked)
    const selOf = new Int32Array(L * M);
    const selAt = new Int32Array(L * M).fill(-1);
    const selN = new Int32Array(L);
    const selViews = Array.from({ length: L }, (_, l) => selOf.subarray(l * M, (l + 1) * M));
    // the count handed over with the latest listing (selN + 1)
    let nListed = 0;
    // per layer: 1 when every page of its latest selection (the newest included) was in HBM after the
    // decision, with the layer's change count and created blocks then (while only blocks were created
    // since, those pages are still in HBM)
    const selIn = new Uint8Array(L);
    const changesAt = new Float64Array(L);
    const createdAt = new Int32Array(L);
    // per layer, with selIn: 1 when HBM then held those pages only (its count was theirs), and the
    // newest page then (selNewest)
    const selOnly = new Uint8Array(L);
    const selNewest = new Int32Array(L);
    // one group, per layer, for a selection that provably stays (selectionStays): the best pair
    // (key, block) known above the floor outside the selection (othBlock -1: none), and the least key
    // norm of the selected pages, both as of the layer's latest selection; whether its latest
    // observation attended exactly the listed pages (obsOk), its uniform share then, and the listed
    // blocks it attended (obsIdx[l * M + i], i < obsIdxN[l])
    const othKey = new Float64Array(L);
    const othBlock = new Int32Array(L).fill(-1);
    const normMin = new Float64Array(L);
    const obsOk = new Uint8Array(L);
    const obsU = new Float64Array(L);
    const obsIdx = G === 1 ? new Int32Array(L * M) : new Int32Array(0);
    const obsIdxN = new Int32Array(L);
    // (the places in the observation's list of those blocks, while it is read)
    const obsAt = new Int32Array(M);
    // the candidates compared at the boundary of an incremental selection, and their keys
    const rest = new Int32Array(M);
    const restKeys = new Float64Array(M);
    const cand = new Int32Array(M);
    const promo = new Int32Array(M);
    // per layer: 1 when its latest decision ended with its list handed over (its selection then and
    // listNewest[l]); the pages an incremental selection added and removed (nAdded, nRemoved), for the
    // list's changes (Actions.skipExceptListedDelta)
    const listOk = new Uint8Array(L);
    const listNewest = new Int32Array(L);
    const added = new Int32Array(M + 1);
    const removed = new Int32Array(M + 1);
    let nAdded = 0;
    let nRemoved = 0;
    // one group, per layer: the listed pages an observation gave the uniform share, held as one value
    // (lazyOn[l]: lazyMark[l * M + b] = 1 where block b's last observed mass is lazyU[l], not
    // last[l * M + b]); the marked blocks are among the layer's latest list: its selection and
    // lazyNewest[l]. An observation that attended exactly the list then writes the blocks whose share
    // changed (the ones it or the one before listed, and those that entered or left the list), not
    // every listed one. A decision writes the value out for the newest page of that list once it is no
    // longer the newest (the pages outside the selection then all hold theirs in last[]), and for every
    // page (flushLazy) unless its selection stays
    const lazyOn = new Uint8Array(L);
    const lazyU = new Float64Array(L);
    const lazyNewest = new Int32Array(L);
    const lazyMark = G === 1 ? new Uint8Array(L * M) : new Uint8Array(0);
    // one group, per layer, for selectByNorm: ordValid[l] = 1 once the order of every block (allK
    // below) was checked against the norms since the layer's latest selection taken anew; the known
    // blocks outside the selection (outList[l * M + i], i < outN[l], while outValid[l] = 1); and the
    // pages it added to the selection that no observation has attended since (pend[l * M + i],
    // i < pendN[l]): the next observation that holds the share gives them the share unless listed
    const byNorm = boundaryByNorm && holdShares && G === 1 && M <= ORD_BLOCKS;
    const ordValid = new Uint8Array(L);
    const outList = byNorm ? new Int32Array(L * M) : new Int32Array(0);
    const outN = new Int32Array(L);
    const outValid = new Uint8Array(L);
    const pend = byNorm ? new Int32Array(L * M) : new Int32Array(0);
    const pendN = new Int32Array(L);
    // per layer: every block below allN[l] in ascending (key norm, block) order, as normBits * 2^21 +
    // block (allK[l * M + i]), and the bits of the norms it was made from (allBits); allOff[l] = 1 once
    // a norm below allN[l] changed or one is negative or NaN (then selectByNorm is not used)
    const allK = byNorm ? new Float64Array(L * M) : new Float64Array(0);
    // (allB[l * M + i]: the block of allK[l * M + i])
    const allB = byNorm ? new Int32Array(L * M) : new Int32Array(0);
    const allBits = byNorm ? new Int32Array(L * M) : new Int32Array(0);
    const allBytes = Array.from({ length: byNorm ? L : 0 }, (_, l) => Buffer.from(allBits.buffer, 4 * l * M, 4 * M));
    const allN = new Int32Array(L);
    const allOff = new Uint8Array(L);
    // per layer: the first block whose key norm may differ from allBits (the least keyNormsFrom since
    // the order was last brought up to date; 0: unknown, compared)
    const ordDirty = new Float64Array(L);
    // per layer: the floor pair of the selection (key < 0: none)
    const floorKeyOf = new Float64Array(L).fill(-1);
    const floorIdOf = new Int32Array(L);
    // step * layers + layer of the last decision that handed over its selection (selViews[l], nListed); -1: none since the last observation
    let listedAt = -1;
    // keys[i]: the estimate of cand[i] for the selections below
    const keys = new Float64Array(M);
    // one group, per layer: the blocks above the floor pair at the layer's last selection
    // (knownList[l * M + i], i < knownCount[l]; inKnown holds the layer's stamp, knownStamp[l], for
    // them: a new stamp forgets them at once), the blocks below knownEnd[l] all
    // looked at then, and the bits of their key norms then (normSnap); known[l] = 1 while only those
    // blocks' masses have changed since (an observation of other blocks clears it)
    const known = new Uint8Array(L);
    const knownList = G === 1 ? new Int32Array(L * M) : new Int32Array(0);
    const knownCount = new Int32Array(L);
    const inKnown = G === 1 ? new Int32Array(L * M) : new Int32Array(0);
    const knownStamp = new Int32Array(L).fill(-1);
    let stamps = 0;
    const knownEnd = new Int32Array(L);
    // (per layer, an even length: also read two at a time, as doubles)
    const normSnap = Array.from({ length: G === 1 ? L : 0 }, () => new Int32Array(M + (M & 1)));
    const snapPairs = normSnap.map((a) => new Float64Array(a.buffer));
    const snapBytes = normSnap.map((a) => Buffer.from(a.buffer));
    // the same as bytes, to compare with the snapshot at once
    const normBytes: Buffer[] = new Array(L).fill(Buffer.alloc(0));
    // the key norms each layer was given, their bits, and two at a time as doubles (null when the
    // array does not start on 8 bytes); views of the same array
    const normsOf: (Float32Array | null)[] = new Array(L).fill(null);
    const normBits: Int32Array[] = new Array(L).fill(new Int32Array(0));
    const normPairs: (Float64Array | null)[] = new Array(L).fill(null);
    // per layer, one group: the first block whose key norm may differ from normSnap (every one below
    // it kept its norm since the snapshot was last brought up to date: the least keyNormsFrom since)
    const normsDirty = new Float64Array(L);
    // blocks whose key norm changed since the layer's last selection
    const changed = G === 1 ? new Int32Array(M) : new Int32Array(0);
    // several groups: -(best (rank, group)) per block, the estimate every selection below uses
    const rankOf = G > 1 ? new Float64Array(M) : new Float64Array(0);
    const rankTmp = G > 1 ? new Float64Array(M) : new Float64Array(0);
    // per layer: a superset of its HBM-resident blocks (blocks enter HBM only when created or
    // promoted; a block the policy demotes leaves it then), in no order, made exact at each use: as it
    // is when as large as the cache's count, else pruned and checked against that count, rebuilt from
    // every block should they differ
    const resList = Array.from({ length: L }, () => new Int32Array(M));
    const resCount = new Int32Array(L);
    const inRes = new Uint8Array(L * M);
    const resSeen = new Int32Array(L);
    // (resPos[l * M + b]: b's place in resList[l] while inRes)
    const resPos = new Int32Array(L * M);
    // the pages selectIncremental listed in promo
    let nPromo = 0;
    // the unselected residents splitByTier listed in cand
    let nUnsel = 0;
    // fullBound's sampled keys (and their places)
    const sampleKeys = new Float64Array(FULL_BOUND_SAMPLE);
    const sampleIds = new Int32Array(FULL_BOUND_SAMPLE);
    this.budgetFactor = o.budget_factor;
    this.denseLayers = o.dense_layers;
    this.offloadTier = o.offload_tier;
    this.holdShares = holdShares;
    this.boundaryByNorm = boundaryByNorm;
    this.stats = stats;
    this.scanMoves = scanMoves;
    this.nUnsel = nUnsel;
    this.boundFull = boundFull;
    this.unselFromChanges = unselFromChanges;
    this.selOnly = selOnly;
    this.selNewest = selNewest;
    this.sampleKeys = sampleKeys;
    this.sampleIds = sampleIds;
    this.M = M;
    this.L = L;
    this.G = G;
    this.lasts = lasts;
    this.last = last;
    this.selOf = selOf;
    this.selAt = selAt;
    this.selN = selN;
    this.selViews = selViews;
    this.nListed = nListed;
    this.selIn = selIn;
    this.changesAt = changesAt;
    this.createdAt = createdAt;
    this.othKey = othKey;
    this.othBlock = othBlock;
    this.normMin = normMin;
    this.obsOk = obsOk;
    this.obsU = obsU;
    this.obsIdx = obsIdx;
    this.obsIdxN = obsIdxN;
    this.obsAt = obsAt;
    this.rest = rest;
    this.restKeys = restKeys;
    this.cand = cand;
    this.promo = promo;
    this.listOk = listOk;
    this.listNewest = listNewest;
    this.added = added;
    this.removed = removed;
    this.nAdded = nAdded;
    this.nRemoved = nRemoved;
    this.lazyOn = lazyOn;
    this.lazyU = lazyU;
    this.lazyNewest = lazyNewest;
    this.lazyMark = lazyMark;
    this.byNorm = byNorm;
    this.ordValid = ordValid;
    this.outList = outList;
    this.outN = outN;
    this.outValid = outValid;
    this.pend = pend;
    this.pendN = pendN;
    this.allK = allK;
    this.allB = allB;
    this.allBits = allBits;
    this.allBytes = allBytes;
    this.allN = allN;
    this.allOff = allOff;
    this.ordDirty = ordDirty;
    this.floorKeyOf = floorKeyOf;
    this.floorIdOf = floorIdOf;
    this.listedAt = listedAt;
    this.keys = keys;
    this.known = known;
    this.knownList = knownList;
    this.knownCount = knownCount;
    this.inKnown = inKnown;
    this.knownStamp = knownStamp;
    this.stamps = stamps;
    this.knownEnd = knownEnd;
    this.normSnap = normSnap;
    this.snapPairs = snapPairs;
    this.snapBytes = snapBytes;
    this.normBytes = normBytes;
    this.normsOf = normsOf;
    this.normBits = normBits;
    this.normPairs = normPairs;
    this.normsDirty = normsDirty;
    this.changed = changed;
    this.rankOf = rankOf;
    this.rankTmp = rankTmp;
    this.resList = resList;
    this.resCount = resCount;
    this.inRes = inRes;
    this.resSeen = resSeen;
    this.resPos = resPos;
    this.nPromo = nPromo;
  }
}

function flushLazy(S: QuestState, l: number): void {
  const { M, last, selOf, selN, lazyOn, lazyU, lazyNewest, lazyMark, pendN } = S;
  const base = l * M;
  const u = lazyU[l];
  for (let i = 0, c = selN[l]; i < c; i++) {
    const b = selOf[base + i];
    if (lazyMark[base + b] === 1) {
      lazyMark[base + b] = 0;
      last[base + b] = u;
    }
  }
  const b = lazyNewest[l];
  if (lazyMark[base + b] === 1) {
    lazyMark[base + b] = 0;
    last[base + b] = u;
  }
  lazyOn[l] = 0;
  pendN[l] = 0;
}

function addRes(S: QuestState, l: number, b: number) {
  const { M, resList, resCount, inRes, resPos } = S;
  if (inRes[l * M + b] === 1) return;
  inRes[l * M + b] = 1;
  resPos[l * M + b] = resCount[l];
  resList[l][resCount[l]++] = b;
}
/** b out of layer l's resident list (demoted), the last entry moved to its place */
function dropRes(S: QuestState, l: number, b: number) {
  const { M, resList, resCount, inRes, resPos } = S;
  const base = l * M;
  if (inRes[base + b] !== 1) return;
  inRes[base + b] = 0;
  const list = resList[l];
  const i = resPos[base + b];
  const moved = list[--resCount[l]];
  list[i] = moved;
  resPos[base + moved] = i;
}

/** layer l's resident blocks, exactly (in no order): resList[l][0, resCount[l]) */
function residents(S: QuestState, cache: PolicyView['cache'], l: number): void {
  const { M, resList, resCount, inRes, resSeen, resPos } = S;
  const created = cache.created[l];
  for (let b = resSeen[l]; b < created; b++) addRes(S, l, b);
  resSeen[l] = created;
  // (a superset of the residents as large as they are is they: the demoted blocks left it as they went)
  if (resCount[l] === cache.countIn(l, 0)) return;
  const list = resList[l];
  const base = l * M;
  let n = 0;
  for (let i = 0; i < resCount[l]; i++) {
    const b = list[i];
    if (cache.tierOf(l, b) === 0) {
      resPos[base + b] = n;
      list[n++] = b;
    } else inRes[base + b] = 0;
  }
  if (n !== cache.countIn(l, 0)) {
    n = 0;
    for (let b = 0; b < created; b++) {
      const on = cache.tierOf(l, b) === 0 ? 1 : 0;
      inRes[base + b] = on;
      if (on) {
        resPos[base + b] = n;
        list[n++] = b;
      }
    }
  }
  resCount[l] = n;
}

/**
 * Layer l's selection from the candidates cand[0, n) (keys in keys[]; every one above the layer's
 * floor, at least pages - 1 of them, the first nKnownIn from its known blocks) when its previous
 * selection's pages are all among them: the same set as the top pages - 1 of them, found at the
 * boundary only. Every previous page above the best unselected candidate stays (fewer than pages - 1
 * candidates rank above it); the rest of the selection is the top of the others and of the previous
 * pages below that candidate. Updates the selection (selOf, selAt, selN), the blocks known above the
 * floor (the candidates), and lists the pages below HBM in promo (nPromo; with selInHbm, the pages
 * of the previous selection are in HBM and only the added ones are looked at). False, having
 * changed nothing, when a page of the previous selection is not a candidate.
 */
function selectIncremental(S: QuestState, cache: PolicyView['cache'], norms: Float32Array, l: number, n: number, nKnownIn: number, pages: number, created: number, selInHbm: boolean): boolean {
  const {
    M, selOf, selAt, selN, othKey, othBlock, normMin, rest, restKeys, cand, promo, added, removed, keys,
    knownList, knownCount, inKnown, knownStamp
  } = S;
  const kb = l * M;
  const ns = selN[l];
  // the best candidate outside the previous selection, (key, block) = (mk, mb)
  let mk = -1;
  let mb = -1;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const b = cand[i];
    if (selAt[kb + b] >= 0) kept++;
    else {
      const k = keys[i];
      if (k > mk || (k === mk && b > mb)) {
        mk = k;
        mb = b;
      }
    }
  }
  if (kept !== ns || ns !== pages - 1) return false;
  let np = 0;
  // for selectionStays: the best candidate outside the selection now (none when every candidate was
  // a previous page; else one of those rest leaves out: every candidate outside is among rest)
  let ok = -1;
  let ob = -1;
  if (mb >= 0) {
    // the others, and the previous pages below (mk, mb)
    let nr = 0;
    let below = 0;
    for (let i = 0; i < n; i++) {
      const b = cand[i];
      const k = keys[i];
      const was = selAt[kb + b] >= 0;
      if (!was || k < mk || (k === mk && b < mb)) {
        rest[nr] = b;
        restKeys[nr++] = k;
        below += +was;
      }
    }
    const take = pages - 1 - (ns - below);
    const drop = nr - take;
    selectBottomKSet(rest, restKeys, nr, drop);
    // out: previous pages below the new selection; in: others above it
    let c = ns;
    for (let i = 0; i < drop; i++) {
      const b = rest[i];
      const k = restKeys[i];
      if (k > ok || (k === ok && b > ob)) {
        ok = k;
        ob = b;
      }
      const at = selAt[kb + b];
      if (at < 0) continue;
      removed[S.nRemoved++] = b;
      const moved = selOf[kb + --c];
      selOf[kb + at] = moved;
      selAt[kb + moved] = at;
      selAt[kb + b] = -1;
    }
    for (let i = drop; i < nr; i++) {
      const b = rest[i];
      if (selAt[kb + b] >= 0) continue;
      selAt[kb + b] = c;
      selOf[kb + c++] = b;
      added[S.nAdded++] = b;
      promo[np] = b;
      np += +(b < created) & +(cache.tierOf(l, b) > 0);
    }
    selN[l] = c;
  }
  S.nPromo = selInHbm ? np : promotionsOf(S, cache, l, selOf, kb, selN[l], created);
  // for selectionStays: that candidate, the least norm in the selection
  othKey[l] = ok;
  othBlock[l] = ob;
  normMin[l] = leastNorm(norms, selOf, kb, selN[l]);
  // the blocks known above the floor: the candidates (a new list only when they differ from it)
  if (nKnownIn !== knownCount[l] || n !== nKnownIn) {
    const stamp = (knownStamp[l] = ++S.stamps);
    for (let i = 0; i < n; i++) {
      const b = cand[i];
      knownList[kb + i] = b;
      inKnown[kb + b] = stamp;
    }
    knownCount[l] = n;
  }
  return true;
}

/**
 * One group: whether layer l's selection provably stays as it is (then the blocks since the
 * latest selection's end are taken in: their norms' bits, those above the floor listed as known).
 * It does when the layer's latest observation attended exactly its listed pages, no key norm below
 * the selection's end changed since (the pages kept their keys but the observed masses: the uniform
 * share u, or a listed mass), and every page's key ranks above the best candidate outside: the
 * best pair known above the floor then (unchanged: none of those was attended), the floor pair
 * when there is none, or a block since the end. A page not listed in the observation has key
 * u + 1e-9·norm >= u + 1e-9·(least norm of the pages) (rounding is monotonic), so that bound above
 * the best outside decides for all of them; the listed ones are compared one by one.
 */
function selectionStays(S: QuestState, l: number, norms: Float32Array, end: number, floorKey: number, floorId: number): boolean {
  const {
    M, last, selAt, othKey, othBlock, normMin, obsU, obsIdx, obsIdxN, outList, outN, outValid, knownList,
    knownCount, inKnown, knownStamp, knownEnd, normSnap, snapBytes, normBytes, normBits, normsDirty
  } = S;
  const was = knownEnd[l];
  if (normsDirty[l] < was && normBytes[l].compare(snapBytes[l], 0, 4 * was, 0, 4 * was) !== 0) return false;
  const base = l * M;
  let mk = floorKey;
  let mb = floorId;
  if (othBlock[l] >= 0) {
    mk = othKey[l];
    mb = othBlock[l];
  }
  for (let b = was; b < end; b++) {
    const k = last[base + b] + 1e-9 * norms[b];
    if (k > mk || (k === mk && b > mb)) {
      mk = k;
      mb = b;
    }
  }
  if (!(obsU[l] + 1e-9 * normMin[l] > mk)) return false;
  for (let i = 0, c = obsIdxN[l]; i < c; i++) {
    const b = obsIdx[base + i];
    if (selAt[base + b] < 0) continue;
    const k = last[base + b] + 1e-9 * norms[b];
    if (!(k > mk || (k === mk && b > mb))) return false;
  }
  // the blocks since the end: taken in (those above the floor are known, the best of them kept)
  const snap = normSnap[l];
  const bits = normBits[l];
  const stamp = knownStamp[l];
  let c = knownCount[l];
  for (let b = was; b < end; b++) {
    snap[b] = bits[b];
    const k = last[base + b] + 1e-9 * norms[b];
    if (k > floorKey || (k === floorKey && b > floorId)) {
      knownList[base + c++] = b;
      inKnown[base + b] = stamp;
      if (outValid[l] === 1) outList[base + outN[l]++] = b;
      if (k > othKey[l] || (k === othKey[l] && b > othBlock[l])) {
        othKey[l] = k;
        othBlock[l] = b;
      }
    }
  }
  knownCount[l] = c;
  knownEnd[l] = end;
  normsDirty[l] = Infinity;
  return true;
}

/** b's place in the key-norm order (allK): its norm's bits (-0 as +0), then the block */
function ordKey(bits: Int32Array, b: number): number {
  return (bits[b] === -0x80000000 ? 0 : bits[b]) * ORD_BLOCKS + b;
}


/**
 * Layer l's blocks below upto into allK in key-norm order: the blocks from allN[l] on inserted while
 * the norms below it are the ones it was made from, else every block sorted anew. False (the order
 * left out from then on, allOff) when a norm below upto is negative or NaN.
 */
function orderAll(S: QuestState, l: number, norms: Float32Array, upto: number): boolean {
  const { M, allK, allB, allBits, allBytes, allN, allOff, ordDirty, normBytes, normBits } = S;
  const base = l * M;
  const bits = normBits[l];
  let n = allN[l];
  // (the norms below n compared with the order's only when one may have been written since)
  if (n > upto || (n > 0 && ordDirty[l] < n && allBytes[l].compare(normBytes[l], 0, 4 * n, 0, 4 * n) !== 0)) n = 0;
  for (let b = n; b < upto; b++) {
    if (!(norms[b] >= 0)) {
      allOff[l] = 1;
      return false;
    }
  }
  if (n === 0) {
    for (let b = 0; b < upto; b++) {
      allK[base + b] = ordKey(bits, b);
      allBits[base + b] = bits[b];
    }
    allK.subarray(base, base + upto).sort();
    for (let i = 0; i < upto; i++) allB[base + i] = ordBlock(allK[base + i]);
  } else {
    for (let b = n; b < upto; b++) {
      const x = ordKey(bits, b);
      const lo = lowerBound(allK, base, n, x);
      allK.copyWithin(base + lo + 1, base + lo, base + n);
      allK[base + lo] = x;
      allB.copyWithin(base + lo + 1, base + lo, base + n);
      allB[base + lo] = b;
      allBits[base + b] = bits[b];
      n++;
    }
  }
  allN[l] = upto;
  ordDirty[l] = Infinity;
  return true;
}


/**
 * One group, the share held (lazyOn): layer l's selection when it changes at its boundary, found
 * without a pass over every selected page. The candidates are the selected pages (at least pages - 1
 * of them above the floor pair, or this returns false), the known blocks outside (outList, above the
 * floor: their keys are as at the selection that left them out, none attended since) and the blocks
 * from the known end on above the floor; d = the candidates outside the selection = those to drop.
 * A selected page holding the share u has key u + 1e-9 * norm, which does not fall as the norm
 * grows (rounding is monotonic): the d least of them are among the first d in key-norm order and
 * those after with the same key as the d-th. The d pairs dropped are the least of those, the selected
 * pages listed in the latest observation (their masses) and the candidates outside. The same set as
 * selectIncremental's (the top pages - 1 candidates), with the same updates (selection, promo, the
 * best candidate outside, least norm, known blocks). False, having changed nothing, when the key
 * norms below the known end changed since the snapshot, a selected page is not above the floor, or
 * a selected page's norm is negative or NaN.
 */
function selectByNorm(S: QuestState, cache: PolicyView['cache'], norms: Float32Array, l: number, end: number, floorKey: number, floorId: number, created: number, selInHbm: boolean): boolean {
  const {
    stats, M, last, selOf, selAt, selN, othKey, othBlock, normMin, obsIdx, obsIdxN, rest, restKeys, promo,
    added, removed, lazyU, lazyMark, ordValid, outList, outN, outValid, pend, pendN, allB, allN, allOff,
    knownList, knownCount, inKnown, knownStamp, knownEnd, normSnap, snapBytes, normBytes, normBits,
    normsDirty
  } = S;
  const base = l * M;
  const was = knownEnd[l];
  if (normsDirty[l] < was && normBytes[l].compare(snapBytes[l], 0, 4 * was, 0, 4 * was) !== 0) return false;
  // (the order of every block below the known end: checked against the norms once a selection)
  if (allOff[l] === 1 || (ordValid[l] === 0 && !orderAll(S, l, norms, was))) return false;
  ordValid[l] = 1;
  if (allN[l] < was && !orderAll(S, l, norms, was)) return false;
  // the first selected page holding the share in key-norm order (its place: from); one not above the
  // floor ends the walk below at its first step, so this selection at once (at the decisions that
  // then select from every block, before any pass of the candidates). Looked for only when fewer
  // pages than selected were listed in the latest observation (then the walk below runs, from here)
  const u = lazyU[l];
  let from = 0;
  if (obsIdxN[l] < selN[l]) {
    from = allN[l];
    for (let i = 0, c = allN[l]; i < c; i++) {
      const b = allB[base + i];
      if (selAt[base + b] < 0 || lazyMark[base + b] === 0) continue;
      const k = u + 1e-9 * norms[b];
      if (!(k > floorKey || (k === floorKey && b > floorId))) return false;
      from = i;
      break;
    }
  }
  if (outValid[l] === 0) {
    let c = 0;
    for (let i = 0, n = knownCount[l]; i < n; i++) {
      const b = knownList[base + i];
      if (selAt[base + b] < 0) outList[base + c++] = b;
    }
    outN[l] = c;
    outValid[l] = 1;
  }
  const ns = selN[l];
  let nr = 0;
  // the candidates outside the selection: the known ones, then the blocks since the known end
  for (let i = 0, c = outN[l]; i < c; i++) {
    const b = outList[base + i];
    const k = last[base + b] + 1e-9 * norms[b];
    rest[nr] = b;
    restKeys[nr] = k;
    nr += +(k > floorKey) | (+(k === floorKey) & +(b > floorId));
  }
  for (let b = was; b < end; b++) {
    const k = last[base + b] + 1e-9 * norms[b];
    rest[nr] = b;
    restKeys[nr] = k;
    nr += +(k > floorKey) | (+(k === floorKey) & +(b > floorId));
  }
  const d = nr;
  // the selected pages listed in the latest observation
  const bits = normBits[l];
  let listed = 0;
  for (let i = 0, c = obsIdxN[l]; i < c; i++) {
    const b = obsIdx[base + i];
    if (selAt[base + b] < 0) continue;
    if (lazyMark[base + b] !== 0) return false;
    const k = last[base + b] + 1e-9 * norms[b];
    if (!(k > floorKey || (k === floorKey && b > floorId))) return false;
    rest[nr] = b;
    restKeys[nr++] = k;
    listed++;
  }
  // the least of those holding the share: the first max(d, 1) in key-norm order and those tied after
  const want = d > 0 ? d : 1;
  let got = 0;
  let lastKey = 0;
  if (listed < ns) {
    // (none before from)
    for (let i = from, c = allN[l]; i < c; i++) {
      const b = allB[base + i];
      if (selAt[base + b] < 0 || lazyMark[base + b] === 0) continue;
      const k = u + 1e-9 * norms[b];
      if (got >= want && k !== lastKey) break;
      if (!(k > floorKey || (k === floorKey && b > floorId))) return false;
      rest[nr] = b;
      restKeys[nr++] = k;
      got++;
      lastKey = k;
    }
  }
  // (from here on the selection changes: the decision's share is what the pages hold)
  if (stats) stats.byNorm++;
  let np = 0;
  let ok = -1;
  let ob = -1;
  // (whether a block past the key-norm order entered the selection)
  let beyond = false;
  if (d > 0) {
    selectBottomKSet(rest, restKeys, nr, d);
    let c = ns;
    let no = outN[l];
    for (let i = 0; i < d; i++) {
      const b = rest[i];
      const k = restKeys[i];
      if (k > ok || (k === ok && b > ob)) {
        ok = k;
        ob = b;
      }
      const at = selAt[base + b];
      if (at < 0) {
        // a block since the known end left out
        if (b >= was) outList[base + no++] = b;
        continue;
      }
      removed[S.nRemoved++] = b;
      const moved = selOf[base + --c];
      selOf[base + at] = moved;
      selAt[base + moved] = at;
      selAt[base + b] = -1;
      if (lazyMark[base + b] === 1) {
        lazyMark[base + b] = 0;
        last[base + b] = u;
      }
      outList[base + no++] = b;
    }
    for (let i = d; i < nr; i++) {
      const b = rest[i];
      if (selAt[base + b] >= 0) continue;
      if (b < was) {
        // a known block outside: out of that list
        for (let j = 0; j < no; j++) {
          if (outList[base + j] === b) {
            outList[base + j] = outList[base + --no];
            break;
          }
        }
      }
      if (b >= allN[l]) beyond = true;
      selAt[base + b] = c;
      selOf[base + c++] = b;
      added[S.nAdded++] = b;
      if (pendN[l] < M) pend[base + pendN[l]++] = b;
      promo[np] = b;
      np += +(b < created) & +(cache.tierOf(l, b) > 0);
    }
    outN[l] = no;
    selN[l] = c;
  }
  S.nPromo = selInHbm ? np : promotionsOf(S, cache, l, selOf, base, selN[l], created);
  othKey[l] = ok;
  othBlock[l] = ob;
  // (the least norm in the selection: its first page in key-norm order, unless a block past the order entered it)
  if (beyond) normMin[l] = leastNorm(norms, selOf, base, selN[l]);
  else {
    let i = 0;
    while (selAt[base + allB[base + i]] < 0) i++;
    normMin[l] = norms[allB[base + i]];
  }
  // the blocks since the known end: their norms' bits, and those above the floor known
  const snap = normSnap[l];
  const stamp = knownStamp[l];
  let c = knownCount[l];
  for (let b = was; b < end; b++) {
    snap[b] = bits[b];
    const k = last[base + b] + 1e-9 * norms[b];
    if (k > floorKey || (k === floorKey && b > floorId)) {
      knownList[base + c++] = b;
      inKnown[base + b] = stamp;
    }
  }
  knownCount[l] = c;
  return true;
}

/** the selected pages (list[from, from + n)) that exist and lie below HBM, into S.promo; their count */
function promotionsOf(S: QuestState, cache: PolicyView['cache'], l: number, list: Int32Array, from: number, n: number, created: number): number {
  const promo = S.promo;
  let np = 0;
  for (let i = 0; i < n; i++) {
    const b = list[from + i];
    promo[np] = b;
    np += +(b < created) & +(cache.tierOf(l, b) > 0);
  }
  return np;
}

function promote(S: QuestState, act: Actions, l: number, b: number): boolean {
  addRes(S, l, b);
  return act.promote(l, b);
}

/** S.cand[0, k) demoted to the offload tier, in that order (each refused one passed over) */
function demoteList(S: QuestState, act: Actions, l: number, k: number): void {
  const { cand } = S;
  const tier = S.offloadTier;
  if (act.demoteBlocks !== undefined) {
    // (cand[j] refused: passed over)
    for (let i = 0; i < k; ) {
      const j = act.demoteBlocks(l, cand, i, k, tier, 16);
      for (; i < j; i++) dropRes(S, l, cand[i]);
      i = j + 1;
    }
  } else for (let i = 0; i < k; i++) if (act.demote(l, cand[i], tier, 16)) dropRes(S, l, cand[i]);
}

/** S.promo[0, np) promoted in that order, each refused one prefetched; whether none was refused */
function promoteList(S: QuestState, act: Actions, cache: PolicyView['cache'], l: number, np: number): boolean {
  const { promo } = S;
  let allIn = true;
  if (act.promoteBlocks !== undefined) {
    // (the pages listed are below HBM: each one is promoted, or refused and prefetched, in list order)
    for (let i = 0; i < np; ) {
      const j = act.promoteBlocks(l, promo, i, np);
      for (const e = j < np ? j + 1 : np; i < e; i++) addRes(S, l, promo[i]);
      if (j < np) {
        act.prefetch(l, promo[j]);
        allIn = false;
      }
    }
  } else {
    for (let i = 0; i < np; i++) {
      if (cache.tierOf(l, promo[i]) > 0 && !promote(S, act, l, promo[i])) {
        act.prefetch(l, promo[i]);
        allIn = false;
      }
    }
  }
  return allIn;
}

function questDecide(S: QuestState, v: PolicyView, act: Actions): void {
  const {
    budgetFactor, denseLayers, M, L, G, lasts, last, selOf, selAt, selN, selViews, selIn, changesAt, createdAt, selOnly, selNewest, othKey, othBlock,
    normMin, obsOk, cand, promo, listOk, listNewest, added, removed, lazyOn, lazyU, lazyNewest, lazyMark,
    byNorm, ordValid, outValid, floorKeyOf, floorIdOf, keys, known, knownList, knownCount, inKnown,
    knownStamp, knownEnd, normSnap, snapPairs, snapBytes, normBytes, normsOf, normBits, normPairs,
    normsDirty, ordDirty, changed, rankOf, rankTmp, resList, resCount
  } = S;
  const l = v.layer;
  const cache = v.cache;
  const base = l * M;
  const K = Math.max(1, v.budgetBlocks);
  const created = cache.created[l];
  const newest = v.nBlocks - 1;
  const dense = l < denseLayers;
  normsDirty[l] = Math.min(normsDirty[l], v.keyNormsFrom ?? 0);
  if (byNorm) ordDirty[l] = Math.min(ordDirty[l], v.keyNormsFrom ?? 0);
  const wasListed = listOk[l] === 1;
  listOk[l] = 0;
  S.nAdded = S.nRemoved = 0;
  // a dense layer whose pages fit HBM uses no selection (it picks the pages to demote only)
  if (dense && cache.countIn(l, 0) + (v.newBlock ? 1 : 0) - K <= 0) {
    streamNextDense(act, l, L, denseLayers, v.step);
    return;
  }
  // selection: the newest page + the top pages by estimate
  const pages = Math.max(1, Math.round(budgetFactor * K));
  let n = 0;
  let full = true;
  // a full selection's candidates from nBelow on only (those before rank below them: fullBound)
  let nBelow = 0;
  // whether the candidates came from the blocks known above the floor (normSnap then holds the
  // bits of every block below `end`)
  let fromKnown = false;
  let nKnownIn = -1;
  const kb = l * M;
  // whether only blocks were created in the layer since its last decision left every selected page in HBM
  const selInHbm = selIn[l] === 1 && cache.changesOf(l) - changesAt[l] === created - createdAt[l];
  selIn[l] = 0;
  // (and HBM held only the selection and the newest page then)
  const selOnlyNow = selInHbm && selOnly[l] === 1;
  selOnly[l] = 0;
  const observed = obsOk[l] === 1;
  obsOk[l] = 0;
  // whether the layer's selection stays as it is (one group), or changed at its boundary by selectByNorm
  let same = false;
  let byNormNow = false;
  if (G > 1) {
    for (let b = 0; b < created; b++) if (cache.tierOf(l, b) >= 0 && b !== newest) cand[n++] = b;
    const norms = v.groupKeyNorms;
    bestGroupRank(cand, n, G, (g, b) => lasts[g][base + b] + 1e-9 * norms[g][b], rankTmp);
    for (let i = 0; i < n; i++) rankOf[cand[i]] = -rankTmp[i];
    for (let i = 0; i < n; i++) keys[i] = rankOf[cand[i]];
  } else {
    const norms = v.keyNorms;
    // first only the pages above this layer's floor pair (a pair some way below the last full
    // selection's): when at least pages - 1 are, the top ones are among them
    const floorKey = floorKeyOf[l];
    const floorId = floorIdOf[l];
    // every block below the newest when none was dropped (no tier to read), else the live ones
    const allLive = cache.live(l) === created;
    const end = Math.min(created, newest);
    if (normsOf[l] !== norms) {
      normsOf[l] = norms;
      normBits[l] = new Int32Array(norms.buffer, norms.byteOffset, norms.length);
      normBytes[l] = Buffer.from(norms.buffer, norms.byteOffset, norms.byteLength);
      normPairs[l] = norms.byteOffset % 8 === 0 ? new Float64Array(norms.buffer, norms.byteOffset, norms.length >> 1) : null;
      known[l] = 0;
      ordDirty[l] = 0;
    }
    const bits = normBits[l];
    const kb = l * M;
    if (lazyOn[l] === 1 && lazyNewest[l] !== newest) {
      const b = lazyNewest[l];
      if (selAt[kb + b] < 0 && lazyMark[kb + b] === 1) {
        lazyMark[kb + b] = 0;
        last[kb + b] = lazyU[l];
      }
    }
    same = floorKey >= 0 && pages > 1 && allLive && known[l] === 1 && knownEnd[l] <= end && selInHbm && observed && selN[l] === pages - 1 && selectionStays(S, l, norms, end, floorKey, floorId);
    // a selection that changes at its boundary while the share is held: from the pages in key-norm order
    byNormNow = !same && byNorm && floorKey >= 0 && pages > 1 && allLive && known[l] === 1 && knownEnd[l] <= end && observed && lazyOn[l] === 1 && selN[l] === pages - 1 && selectByNorm(S, cache, norms, l, end, floorKey, floorId, created, selInHbm);
    // (every read of last[] below is of the values written out)
    if (!same && !byNormNow && lazyOn[l] === 1) flushLazy(S, l);
    if (floorKey >= 0 && pages > 1) {
      if (same || byNormNow) {
        // (the selection stays)
      } else if (allLive && known[l] === 1 && knownEnd[l] <= end) {
        fromKnown = true;
        // (after the blocks known above the floor: nKnownIn of them still are)
        // only blocks whose key may have changed since the layer's last selection can be above the
        // floor now: the ones above it then (the attended ones among them took new masses), the
        // blocks from that selection's end to this one's, and blocks whose key norm changed
        const was = knownEnd[l];
        n = keysOfListAbove(cand, keys, n, knownList, kb, knownCount[l], last, base, norms, floorKey, floorId);
        nKnownIn = n;
        // (norms equal to the snapshot's in bytes, one native compare, have not changed; else they
        // are compared two at a time as doubles: equal doubles have equal bits but for +0 and -0,
        // which leave every key as it is; a pair that differs is compared by its bits)
        const snap = normSnap[l];
        const pairs = normPairs[l];
        let nx = 0;
        let from = 0;
        if (normsDirty[l] >= was || normBytes[l].compare(snapBytes[l], 0, 4 * was, 0, 4 * was) === 0) from = was;
        else if (pairs !== null) {
          const sp = snapPairs[l];
          const np = was >> 1;
          for (let p = 0; p < np; p++) {
            if (pairs[p] === sp[p]) continue;
            const b = 2 * p;
            changed[nx] = b;
            nx += +(bits[b] !== snap[b]);
            changed[nx] = b + 1;
            nx += +(bits[b + 1] !== snap[b + 1]);
          }
          from = 2 * np;
        }
        for (let b = from; b < was; b++) if (bits[b] !== snap[b]) changed[nx++] = b;
        for (let i = 0; i < nx; i++) {
          const b = changed[i];
          snap[b] = bits[b];
          if (inKnown[kb + b] === knownStamp[l]) continue;
          const k = last[base + b] + 1e-9 * norms[b];
          cand[n] = b;
          keys[n] = k;
          n += +(k > floorKey) | (+(k === floorKey) & +(b > floorId));
        }
        for (let b = was; b < end; b++) snap[b] = bits[b];
        n = keysOfRangeAbove(cand, keys, n, was, end, last, base, norms, floorKey, floorId);
      } else if (allLive) {
        n = keysOfRangeAbove(cand, keys, n, 0, end, last, base, norms, floorKey, floorId);
      } else {
        for (let b = 0; b < created; b++) {
          if (cache.tierOf(l, b) >= 0 && b !== newest) {
            const k = last[base + b] + 1e-9 * norms[b];
            cand[n] = b;
            keys[n] = k;
            n += +(k > floorKey) | (+(k === floorKey) & +(b > floorId));
          }
        }
      }
      if (same || byNormNow) full = false;
      else if (n < pages - 1) n = 0;
      else full = false;
    }
    if (full) {
      // the pairs that rank at or above the floor pair to select below: the top keep of them
      const keep = pages - 1 + Math.ceil(pages / 16);
      if (allLive && S.boundFull && pages > 1 && end >= FULL_BOUND_BLOCKS && end >= FULL_BOUND_SHARE * keep) {
        // (only those at or above a sampled bound, at the end of cand; every block again, in block
        // order, when fewer than keep are, or a key is NaN)
        const t = fullBound(S, last, base, norms, end, keep);
        const w = keysOfRangeAtLeast(cand, keys, end, last, base, norms, t);
        n = end;
        const held = w >= 0 && end - w >= keep;
        if (held) nBelow = w;
        else n = keysOfRange(cand, keys, 0, 0, end, last, base, norms);
        if (S.stats) {
          S.stats.byBound = (S.stats.byBound ?? 0) + 1;
          if (!held) S.stats.boundMissed = (S.stats.boundMissed ?? 0) + 1;
        }
      } else if (allLive) n = keysOfRange(cand, keys, n, 0, end, last, base, norms);
      else {
        for (let b = 0; b < created; b++) {
          if (cache.tierOf(l, b) >= 0 && b !== newest) {
            cand[n] = b;
            keys[n++] = last[base + b] + 1e-9 * norms[b];
          }
        }
      }
    }
  }
  let np = 0;
  // with one group, from the known blocks: the selection changes only at its boundary (below)
  if (!same && !byNormNow) {
    // (the selection and the known blocks are taken anew below)
    ordValid[l] = 0;
    outValid[l] = 0;
  }
  const incremental = same || byNormNow || (G === 1 && fromKnown && !full && selectIncremental(S, cache, v.keyNorms, l, n, nKnownIn, pages, created, selInHbm));
  if (same) np = 0;
  else if (incremental) {
    np = S.nPromo;
    knownEnd[l] = Math.min(created, newest);
    normsDirty[l] = Infinity;
  } else {
    const drop = Math.max(0, n - (pages - 1));
    if (G === 1 && full) {
      // the floor pair for the next steps: pages / 16 pairs below the selection (at least one), if
      // there are as many. A floor closer to the selection keeps fewer candidates at each step and
      // runs out sooner (then the full pass above comes back): on the bench trace, from `pages`
      // pairs below down to pages / 16, the candidates fell from 760 to 540 a decision while the
      // full passes went from 2% to 5% of the decisions. The selection's boundary is selected first,
      // over every candidate, then the floor among the pairs below the boundary (the same sets as the
      // floor first and the boundary among the margin + pages - 1 pairs above it; on the bench trace
      // the second selection then runs over ~210 pairs instead of ~440)
      const margin = Math.ceil(pages / 16);
      if (drop > margin && pages > 1) {
        const f = drop - margin;
        selectAt(cand, keys, drop - 1, nBelow, n - 1);
        if (drop - 1 > f) selectAt(cand, keys, f, nBelow, drop - 2);
        floorKeyOf[l] = keys[f];
        floorIdOf[l] = cand[f];
      } else {
        selectBottomKSet(cand, keys, n, drop);
        floorKeyOf[l] = -1;
      }
    } else selectBottomKSet(cand, keys, n, drop);
    let knownFrom = -1;
    if (G === 1) {
      // the blocks above the floor now, for the layer's next selection: every candidate of a pass
      // above the floor, or those above the new floor after a full pass (which read every block);
      // the norms' bits taken unless the candidates came from the known blocks (then taken there)
      // (listed with the selection below: cand[knownFrom, n), knownFrom <= drop)
      knownStamp[l] = ++S.stamps;
      knownCount[l] = 0;
      known[l] = 0;
      const end = Math.min(created, newest);
      if (cache.live(l) === created && floorKeyOf[l] >= 0 && pages > 1) {
        knownFrom = full ? drop - Math.ceil(pages / 16) + 1 : 0;
        if (!fromKnown || full) normSnap[l].set(normBits[l].subarray(0, end));
        knownEnd[l] = end;
        known[l] = 1;
        normsDirty[l] = Infinity;
      }
    }
    // the selected pages (the previous selection's marks cleared), and among them those below HBM
    // (promo, in block order once sorted: promoted below); one pass with the blocks known above the floor
    for (let i = 0, c = selN[l]; i < c; i++) selAt[kb + selOf[kb + i]] = -1;
    let ns = 0;
    if (knownFrom >= 0) {
      const stamp = knownStamp[l];
      let c = 0;
      // (and the best of the known blocks left out, for selectionStays)
      let ok = -1;
      let ob = -1;
      for (let i = knownFrom; i < drop; i++) {
        const b = cand[i];
        knownList[kb + c++] = b;
        inKnown[kb + b] = stamp;
        const k = keys[i];
        if (k > ok || (k === ok && b > ob)) {
          ok = k;
          ob = b;
        }
      }
      othKey[l] = ok;
      othBlock[l] = ob;
      for (let i = drop; i < n; i++) {
        const b = cand[i];
        knownList[kb + c++] = b;
        inKnown[kb + b] = stamp;
        selAt[kb + b] = ns;
        selOf[kb + ns++] = b;
        // (written always, kept when below HBM: no branch on the scattered tiers)
        promo[np] = b;
        np += +(b < created) & +(cache.tierOf(l, b) > 0);
      }
      knownCount[l] = c;
      normMin[l] = leastNorm(v.keyNorms, selOf, kb, ns);
    } else {
      for (let i = drop; i < n; i++) {
        const b = cand[i];
        selAt[kb + b] = ns;
        selOf[kb + ns++] = b;
        promo[np] = b;
        np += +(b < created) & +(cache.tierOf(l, b) > 0);
      }
    }
    selN[l] = ns;
  }
  // the newest last
  const nSel = selN[l];
  selOf[kb + nSel] = newest;
  promo[np] = newest;
  np += +(newest < created) & +(cache.tierOf(l, newest) > 0);
  // HBM: room for the new page and the selected pages, taken from the lowest-estimate unselected residents
  let need = cache.countIn(l, 0) + (v.newBlock ? 1 : 0) - K;
  // (many pages to promote: they and the unselected residents in block order from one pass over the blocks, not sorted)
  let r = -1;
  if (S.scanMoves && np >= SCAN_PROMOTIONS && SCAN_SHARE * np >= created) {
    np = splitByTier(S, cache, l, created, newest);
    r = S.nUnsel;
    if (S.stats) S.stats.byScan = (S.stats.byScan ?? 0) + 1;
  } else sortAscending(promo, np);
  if (!dense) need += np;
  // whether selected resident pages were demoted (then they are promoted back below)
  let demotedSelected = false;
  if (need > 0) {
    // the unselected residents in block order
    residents(S, cache, l);
    if (r < 0) {
      if (selOnlyNow && incremental && S.unselFromChanges) {
        r = unselectedSince(S, cache, l, created, newest);
        sortAscending(cand, r);
        if (S.stats) {
          S.stats.bySince = (S.stats.bySince ?? 0) + 1;
          if (S.stats.sinceDiffers !== undefined && !sameUnselected(S, l, r, newest)) S.stats.sinceDiffers++;
        }
      } else {
        r = unselectedOf(cand, resList[l], resCount[l], selAt, kb, newest);
        sortAscending(cand, r);
      }
    }
    if (r < need) {
      // (selected pages too: their masses written out)
      if (G === 1 && lazyOn[l] === 1) flushLazy(S, l);
      for (let b = 0; b < created; b++) if (cache.tierOf(l, b) === 0 && selAt[kb + b] >= 0) cand[r++] = b;
      demotedSelected = true;
    }
    if (G > 1) for (let i = 0; i < r; i++) keys[i] = rankOf[cand[i]];
    else {
      keysOf(keys, cand, r, last, base, v.keyNorms);
    }
    const k = selectBottomKKeyed(cand, keys, r, need);
    demoteList(S, act, l, k);
  }
  if (dense) {
    streamNextDense(act, l, L, denseLayers, v.step);
    return;
  }
  if (v.step < 0) return;
  // (the promotions move selected pages only: the unselected ones to skip are the same after them)
  let allIn = true;
  if (demotedSelected) {
    for (let b = 0; b < created; b++) {
      if ((selAt[kb + b] >= 0 || b === newest) && cache.tierOf(l, b) > 0 && !promote(S, act, l, b)) {
        act.prefetch(l, b);
        allIn = false;
      }
    }
  } else allIn = promoteList(S, act, cache, l, np);
  if (allIn) {
    selIn[l] = 1;
    changesAt[l] = cache.changesOf(l);
    createdAt[l] = created;
    // (the selected pages, all below created, and the newest once created are distinct)
    selOnly[l] = +(cache.countIn(l, 0) === nSel + (newest < created ? 1 : 0));
    selNewest[l] = newest;
  }
  S.nListed = nSel + 1;
  // the same list as the layer's latest, changed by the pages that entered and left the selection
  // and the newest page
  let skipped = -1;
  if (wasListed && (same || incremental) && act.skipExceptListedDelta !== undefined) {
    const was = listNewest[l];
    if (was !== newest) {
      added[S.nAdded++] = newest;
      if (selAt[kb + was] < 0) removed[S.nRemoved++] = was;
    }
    skipped = act.skipExceptListedDelta(added, S.nAdded, removed, S.nRemoved);
  }
  if (skipped < 0) act.skipExceptListed(selViews[l], S.nListed, 'all');
  listOk[l] = 1;
  listNewest[l] = newest;
  S.listedAt = v.step * L + l;
  if (l + 1 === L && denseLayers > 0) act.prefetchOffloaded(0);
}

function questObserve(S: QuestState, obs: Observation): void {
  const {
    holdShares, M, L, G, lasts, last, selOf, selAt, selN, selViews, obsOk, obsU, obsIdx, obsIdxN, obsAt, lazyOn,
    lazyU, lazyNewest, lazyMark, pend, pendN, known
  } = S;
  // after a sparse layer's decision, the attended pages are among the listed ones
  const listed = obs.step >= 0 && S.listedAt === obs.step * L + obs.layer;
  S.listedAt = -1;
  const l = obs.layer;
  obsOk[l] = 0;
  const idx = obs.groups[0].idx;
  if (holdShares && G === 1 && listed && obs.attendedCount === S.nListed && idx !== null) {
    // the list attended (it holds distinct live blocks, and a block created after it was listed):
    // its pages listed in the observation took their masses, the others its uniform share
    const { mass, uniform } = obs.groups[0];
    const attended = obs.attended;
    const base = l * M;
    const newest = obs.nBlocks - 1;
    if (lazyOn[l] === 1) {
      // the selection is the one marked (a decision that changes it writes the marks out first, and
      // the newest page before, once it left the list): the newest page now, and the pages the
      // observation before listed, take the share now (unless listed now)
      if (lazyNewest[l] !== newest) lazyMark[base + newest] = 1;
      // (branch-free: the marks of the pages not selected written as they are)
      for (let j = 0, c = obsIdxN[l]; j < c; j++) {
        const b = obsIdx[base + j];
        lazyMark[base + b] |= +(selAt[base + b] >= 0) | +(b === newest);
      }
      // (and the pages added to the selection since)
      for (let j = 0, c = pendN[l]; j < c; j++) {
        const b = pend[base + j];
        if (selAt[base + b] >= 0) lazyMark[base + b] = 1;
      }
      pendN[l] = 0;
    } else {
      for (let i = 0, c = selN[l]; i < c; i++) lazyMark[base + selOf[base + i]] = 1;
      lazyMark[base + newest] = 1;
      lazyOn[l] = 1;
    }
    lazyU[l] = uniform;
    lazyNewest[l] = newest;
    // the listed blocks attended (branch-free: about as many are attended as not), then their masses
    let c = 0;
    for (let i = 0; i < idx.length; i++) {
      const b = idx[i];
      obsIdx[base + c] = b;
      obsAt[c] = i;
      c += +(attended[b] === 1);
    }
    for (let j = 0; j < c; j++) {
      const b = obsIdx[base + j];
      last[base + b] = mass[obsAt[j]];
      lazyMark[base + b] = 0;
    }
    obsIdxN[l] = c;
    obsU[l] = uniform;
    obsOk[l] = 1;
    return;
  }
  if (lazyOn[l] === 1) flushLazy(S, l);
  pendN[l] = 0;
  for (let g = 0; g < G; g++) {
    if (!(listed && lastObservedAmong(lasts[g], l * M, obs, obs.groups[g], selViews[l], S.nListed))) {
      lastObserved(lasts[g], l * M, obs, obs.groups[g]);
      // (masses outside the selection changed)
      known[l] = 0;
    } else if (G === 1 && obs.attendedCount === S.nListed) {
      // every listed page attended (the list holds distinct blocks): those not listed in the
      // observation took its uniform share
      const { idx, uniform } = obs.groups[0];
      const attended = obs.attended;
      const base = l * M;
      let c = 0;
      for (let i = 0; i < idx!.length; i++) {
        const b = idx![i];
        obsIdx[base + c] = b;
        c += attended[b];
      }
      obsIdxN[l] = c;
      obsU[l] = uniform;
      obsOk[l] = 1;
    }
  }
}

/*
 * The candidates' keys (last observed mass + 1e-9 * key norm) as module functions, not in the policy's
 * closures: one compiled copy serves every replay in a process.
 */

/** Appends the blocks of list[from, from + count) above the floor pair to cand/keys from n; returns the new n. */
function keysOfListAbove(cand: Int32Array, keys: Float64Array, n: number, list: Int32Array, from: number, count: number, last: Float64Array, base: number, norms: Float32Array, floorKey: number, floorId: number): number {
  for (let i = from, e = from + count; i < e; i++) {
    const b = list[i];
    const k = last[base + b] + 1e-9 * norms[b];
    // (written always, kept when above the floor: no branch on the key)
    cand[n] = b;
    keys[n] = k;
    n += +(k > floorKey) | (+(k === floorKey) & +(b > floorId));
  }
  return n;
}

/** Appends the blocks b0 <= b < b1 above the floor pair to cand/keys from n; returns the new n. */
function keysOfRangeAbove(cand: Int32Array, keys: Float64Array, n: number, b0: number, b1: number, last: Float64Array, base: number, norms: Float32Array, floorKey: number, floorId: number): number {
  for (let b = b0; b < b1; b++) {
    const k = last[base + b] + 1e-9 * norms[b];
    cand[n] = b;
    keys[n] = k;
    n += +(k > floorKey) | (+(k === floorKey) & +(b > floorId));
  }
  return n;
}

/** Appends the blocks b0 <= b < b1 to cand/keys from n; returns the new n. */
function keysOfRange(cand: Int32Array, keys: Float64Array, n: number, b0: number, b1: number, last: Float64Array, base: number, norms: Float32Array): number {
  for (let b = b0; b < b1; b++) {
    cand[n] = b;
    keys[n++] = last[base + b] + 1e-9 * norms[b];
  }
  return n;
}

/** keys[i] = the key of cand[i], i < n */
function keysOf(keys: Float64Array, cand: Int32Array, n: number, last: Float64Array, base: number, norms: Float32Array): void {
  for (let i = 0; i < n; i++) keys[i] = last[base + cand[i]] + 1e-9 * norms[cand[i]];
}

/** The blocks of list[0, count) outside the selection (selAt[at + b] < 0) but the newest into cand; returns their count. */
function unselectedOf(cand: Int32Array, list: Int32Array, count: number, selAt: Int32Array, at: number, newest: number): number {
  let r = 0;
  for (let i = 0; i < count; i++) {
    const b = list[i];
    cand[r] = b;
    r += +(selAt[at + b] < 0) & +(b !== newest);
  }
  return r;
}

/**
 * The HBM residents outside the selection but the newest into S.cand (their count returned, in no
 * order), when the layer's previous decision left HBM holding exactly its selection and its newest
 * page (then in HBM: selOnly), nothing but block creations changed the layer since, and this
 * decision's selection is that one less the pages in S.removed and plus those in S.added: the
 * residents are then the previous pages, the previous newest and the blocks created since in HBM;
 * of those, the pages that left the selection, the previous newest and the created ones not selected.
 */
function unselectedSince(S: QuestState, cache: PolicyView['cache'], l: number, created: number, newest: number): number {
  const { M, selAt, cand, removed, nRemoved, selNewest, createdAt } = S;
  const kb = l * M;
  let r = 0;
  for (let i = 0; i < nRemoved; i++) cand[r++] = removed[i];
  const was = selNewest[l];
  const since = createdAt[l];
  if (was < since && was !== newest && selAt[kb + was] < 0) cand[r++] = was;
  for (let b = since; b < created; b++) {
    cand[r] = b;
    r += +(cache.tierOf(l, b) === 0) & +(selAt[kb + b] < 0) & +(b !== newest);
  }
  return r;
}

/** whether S.cand[0, r) (ascending) lists layer l's unselected residents as unselectedOf does (for tests) */
function sameUnselected(S: QuestState, l: number, r: number, newest: number): boolean {
  const { M, rest, cand, resList, resCount, selAt } = S;
  const n = unselectedOf(rest, resList[l], resCount[l], selAt, l * M, newest);
  sortAscending(rest, n);
  if (n !== r) return false;
  for (let i = 0; i < n; i++) if (rest[i] !== cand[i]) return false;
  return true;
}

/**
 * Pages to promote from which splitByTier lists them and the unselected residents in one pass over
 * the layer's blocks, not from the lists sorted: at least SCAN_PROMOTIONS of them and one in
 * SCAN_SHARE of the blocks (on the bench trace: the full selections, ~300 promotions in ~2,080 blocks).
 */
const SCAN_PROMOTIONS = 16;
const SCAN_SHARE = 8;

/**
 * One pass over layer l's blocks below created: the selected ones and the newest below HBM into
 * S.promo (their count returned), the HBM residents outside the selection but the newest into S.cand
 * (S.nUnsel); both in block order, as sorting the lists of promotionsOf and unselectedOf gives them.
 */
function splitByTier(S: QuestState, cache: PolicyView['cache'], l: number, created: number, newest: number): number {
  const { M, selAt, promo, cand } = S;
  const kb = l * M;
  let np = 0;
  let r = 0;
  for (let b = 0; b < created; b++) {
    const t = cache.tierOf(l, b);
    const sel = +(selAt[kb + b] >= 0) | +(b === newest);
    promo[np] = b;
    np += sel & +(t > 0);
    cand[r] = b;
    r += (sel ^ 1) & +(t === 0);
  }
  S.nUnsel = r;
  return np;
}

/**
 * A full selection (one group, every block live) selects among the blocks at or above a bound when
 * there are at least FULL_BOUND_BLOCKS of them and FULL_BOUND_SHARE times as many as it keeps (the
 * selection and the pairs above its floor): on the bench trace ~2,080 blocks and ~441 kept, so the
 * boundary's selection runs over ~600 pairs instead of ~2,080, and the floor's over the ~210 below the
 * boundary. The bound is a key from
 * FULL_BOUND_SAMPLE keys spread evenly over the blocks.
 */
const FULL_BOUND_BLOCKS = 512;
const FULL_BOUND_SHARE = 3;
const FULL_BOUND_SAMPLE = 128;

/**
 * A key that (in expectation) keep blocks of 0 <= b < end and 2.5 standard deviations more lie at or
 * above: the key of that rank among FULL_BOUND_SAMPLE keys at evenly spread blocks (-Infinity when
 * that is every sampled key). Only an estimate: the caller checks the count.
 */
function fullBound(S: QuestState, last: Float64Array, base: number, norms: Float32Array, end: number, keep: number): number {
  const { sampleKeys, sampleIds } = S;
  const n = FULL_BOUND_SAMPLE;
  for (let j = 0; j < n; j++) {
    const b = Math.floor(((2 * j + 1) * end) / (2 * n));
    sampleIds[j] = j;
    sampleKeys[j] = last[base + b] + 1e-9 * norms[b];
  }
  const p = keep / end;
  const atOrAbove = Math.ceil(n * p + 2.5 * Math.sqrt(n * p * (1 - p)));
  const q = n - atOrAbove;
  if (q <= 0) return -Infinity;
  selectAt(sampleIds, sampleKeys, q, 0, n - 1);
  return sampleKeys[q];
}

/**
 * The blocks 0 <= b < end whose key (last + 1e-9 * norm) is at least t, with their keys, at the end
 * of cand/keys: [w, end) in no order (cand/keys below w left as they are, not candidates). Returns w,
 * or -1 when a key is NaN (its rank is not defined: the caller selects among every block instead).
 */
function keysOfRangeAtLeast(cand: Int32Array, keys: Float64Array, end: number, last: Float64Array, base: number, norms: Float32Array, t: number): number {
  // (each block written at w - 1, kept by moving w: no branch on the key)
  let w = end;
  let nan = 0;
  for (let b = end - 1; b >= 0; b--) {
    const k = last[base + b] + 1e-9 * norms[b];
    cand[w - 1] = b;
    keys[w - 1] = k;
    w -= +(k >= t);
    nan |= +(k !== k);
  }
  return nan === 0 ? w : -1;
}

/** blocks per layer that selectByNorm's order keys hold (norm bits * ORD_BLOCKS + block, below 2^53) */
const ORD_BLOCKS = 2 ** 21;

/** the block of a key-norm order key (exact: ORD_BLOCKS is a power of two; no floating remainder) */
function ordBlock(p: number): number {
  return p - ORD_BLOCKS * Math.floor(p / ORD_BLOCKS);
}

/** the least of norms[list[from + i]], i < n (Infinity when n = 0; NaN when one is) */
function leastNorm(norms: Float32Array, list: Int32Array, from: number, n: number): number {
  let m = Infinity;
  for (let i = 0; i < n; i++) {
    const x = norms[list[from + i]];
    if (x < m) m = x;
    else if (x !== x) return Number.NaN;
  }
  return m;
}

/** Dense layers stream their offloaded pages: after layer l, issue the next dense layer's one layer ahead. */
function streamNextDense(act: Actions, l: number, L: number, denseLayers: number, step: number): void {
  const nl = l + 1 < L ? l + 1 : 0;
  if (nl < denseLayers && step >= 0) act.prefetchOffloaded(nl);
}

/** a[0, n) in ascending order (insertion sort when few, as the lists here mostly are) */
function sortAscending(a: Int32Array, n: number): void {
  if (n > 32) {
    a.subarray(0, n).sort();
    return;
  }
  for (let i = 1; i < n; i++) {
    const x = a[i];
    let j = i;
    while (j > 0 && a[j - 1] > x) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

/** last[base + b] = the mass one group gave block b, for every attended block (skipped ones keep theirs). */
export function lastObserved(last: Float64Array, base: number, obs: Observation, ga: GroupAttention): void {
  const { idx, mass, uniform } = ga;
  const { attended } = obs;
  if (idx === null) {
    for (let b = 0; b < obs.nBlocks; b++) if (attended[b]) last[base + b] = mass[b];
    return;
  }
  // (every block attended, as in the dense layers: the share written by one native fill)
  if (obs.attendedCount === obs.nBlocks && attended.length === obs.nBlocks) last.fill(uniform, base, base + obs.nBlocks);
  else for (let b = 0; b < obs.nBlocks; b++) if (attended[b]) last[base + b] = uniform;
  for (let i = 0; i < idx.length; i++) if (attended[idx[i]]) last[base + idx[i]] = mass[i];
}

/**
 * lastObserved for a top-k row when every attended block is among blocks[0..count) (distinct): the
 * uniform share is written by a pass over those blocks only. Returns false, having written only
 * what lastObserved also writes, when the row is dense or some attended block is not among them
 * (then call lastObserved).
 */
export function lastObservedAmong(last: Float64Array, base: number, obs: Observation, ga: GroupAttention, blocks: Int32Array, count: number): boolean {
  const { idx, mass, uniform } = ga;
  if (idx === null) return false;
  const { attended, nBlocks } = obs;
  let seen = 0;
  for (let i = 0; i < count; i++) {
    const b = blocks[i];
    if (b < nBlocks && attended[b]) {
      last[base + b] = uniform;
      seen++;
    }
  }
  if (seen !== obs.attendedCount) return false;
  for (let i = 0; i < idx.length; i++) if (attended[idx[i]]) last[base + idx[i]] = mass[i];
  return true;
}
