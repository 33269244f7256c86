/**
 * DPNC demand-paged tiers (seed system, kvtier issue 3): HBM is the page cache the attention kernel
 * reads; below it four backing tiers, DRAM / CXL / SSD (nvme) / HDD, hold the pages (16-token KV
 * blocks, FP16). A page that is not in HBM is not attended until it is paged in (demand paging of a
 * sparse working set), so recall measures how well the pager predicts.
 *
 * - Eviction from HBM: weighted LRU × importance — the resident page with the smallest
 *   importance × 1/(1 + age) goes (importance = cumulative attention normalized by the layer's max,
 *   age = steps since its last use; a use is mass >= use_threshold × the row max).
 * - Promotion (page-in, one layer ahead, at most page_in pages per layer and step) of a paged-out
 *   page on any trigger: predicted access (the Hoeffding tree says it is used next step), recent
 *   access (used within recent_steps of its last attendance), high importance (importance above the
 *   lowest resident page's).
 * - Demotion between backing tiers: capacity pressure (a tier holds at most its quota of pages per
 *   layer: DRAM dram_factor × budget, CXL cxl_factor × budget, SSD ssd_factor × budget, HDD the rest)
 *   moves the lowest-value pages down; LRU age (unused for age_steps) and low importance (below
 *   low_importance) move a page one tier down, at most demote_max per layer and step.
 * - Prefetch predictor: a streaming Hoeffding tree (hoeffding-tree.ts) over features [recency,
 *   frequency, importance, key-norm z-score, position, tier], trained on every attended page with the
 *   label "used at this step", its prequential accuracy reported in summary.policy_report.
 * - Energy: the energy model (sim/quality/energy-model.ts) reports joules per token for every run.
 */
import { AttentionScore } from './attention-score.js';
import { HoeffdingTree } from './hoeffding-tree.js';
import type { Actions, Observation, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  use_threshold: number;
  dram_factor: number;
  cxl_factor: number;
  ssd_factor: number;
  page_in: number;
  recent_steps: number;
  age_steps: number;
  low_importance: number;
  demote_max: number;
}

const FEATURES = 6;

export const dpnc: PolicyDefinition<Options> = {
  name: 'dpnc',
  description:
    'DPNC demand-paged tiers: HBM page cache over DRAM/CXL/SSD/HDD; eviction by weighted LRU x importance; page-in on predicted access (streaming Hoeffding tree), recent access or high importance; demotion on capacity pressure, LRU age or low importance; paged-out blocks are not attended.',
  source: 'DPNC (seed system, kvtier issue 3); Hoeffding tree: Domingos & Hulten, KDD 2000',
  options: [
    { name: 'use_threshold', type: 'number', default: 0.01, min: 0, max: 1, description: 'a page is used when its mass >= this share of the row maximum' },
    { name: 'dram_factor', type: 'number', default: 2, min: 0, description: 'DRAM quota per layer, x the HBM budget in pages' },
    { name: 'cxl_factor', type: 'number', default: 2, min: 0, description: 'CXL quota per layer, x the HBM budget' },
    { name: 'ssd_factor', type: 'number', default: 4, min: 0, description: 'SSD (nvme) quota per layer, x the HBM budget; the rest goes to HDD' },
    { name: 'page_in', type: 'integer', default: 4, min: 0, description: 'pages promoted per layer and step at most' },
    { name: 'recent_steps', type: 'integer', default: 4, min: 0, description: 'recent-access trigger: used within this many steps of its last attendance' },
    { name: 'age_steps', type: 'integer', default: 16, min: 1, description: 'LRU-age trigger: unused this many steps -> one tier down' },
    { name: 'low_importance', type: 'number', default: 0.01, min: 0, max: 1, description: 'low-importance trigger: normalized importance below this -> one tier down' },
    { name: 'demote_max', type: 'integer', default: 4, min: 0, description: 'age/importance demotions per layer and step at most' },
  ],
  create(o, setup) {
    const L = setup.layers;
    const M = setup.maxBlocks;
    const chain = ['dram', 'cxl', 'nvme', 'hdd'].filter((t) => setup.tiers.includes(t));
    if (chain.length === 0) throw new Error('policy dpnc: the machine has none of the tiers dram, cxl, nvme, hdd');
    const quotaFactor: Record<string, number> = { dram: o.dram_factor, cxl: o.cxl_factor, nvme: o.ssd_factor, hdd: Infinity };
    const score = new AttentionScore(L, M);
    const lastUse = new Int32Array(L * M).fill(-1);
    const lastSeen = new Int32Array(L * M).fill(-1);
    const uses = new Float64Array(L * M);
    const seen = new Float64Array(L * M);
    const tree = new HoeffdingTree({ features: FEATURES });
    const feats = new Float64Array(L * M * FEATURES);
    // step whose decision recorded a page's features (-1: none), and the step a page was paged in on a prediction
    const featStep = new Int32Array(L * M).fill(-1);
    const predictedFor = new Int32Array(L * M).fill(-1);
    const norms: Float32Array[] = Array.from({ length: L }, () => new Float32Array(M));
    let now = 0;
    let predictions = 0;
    let predictedUsed = 0;

    const maxScore = (l: number, created: number) => {
      let m = 0;
      for (let b = 0; b < created; b++) m = Math.max(m, score.get(l, b));
      return m > 0 ? m : 1;
    };
    const features = (v: PolicyView, l: number, b: number, mx: number, stats: { mean: number; sd: number }, out: Float64Array, at: number) => {
      const i = l * M + b;
      const age = lastUse[i] < 0 ? 64 : now - lastUse[i];
      out[at] = Math.min(1, age / 64);
      out[at + 1] = seen[i] > 0 ? uses[i] / seen[i] : 0;
      out[at + 2] = Math.max(0, score.get(l, b)) / mx;
      const z = stats.sd > 0 ? (norms[l][b] - stats.mean) / stats.sd : 0;
      out[at + 3] = 1 / (1 + Math.exp(-z));
      out[at + 4] = b / Math.max(1, v.nBlocks);
      out[at + 5] = Math.max(0, v.cache.tierOf(l, b)) / 4;
    };
    const normStats = (l: number, created: number) => {
      let s = 0;
      let q = 0;
      for (let b = 0; b < created; b++) {
        s += norms[l][b];
        q += norms[l][b] ** 2;
      }
      const mean = created ? s / created : 0;
      return { mean, sd: created ? Math.sqrt(Math.max(0, q / created - mean * mean)) : 0 };
    };

    /** Make layer l's HBM (and, with pageIn, its page-ins and backing tiers) right for its attention at step t. */
    const manage = (v: PolicyView, act: Actions, l: number, incoming: number, pageIn: boolean, t: number) => {
      const cache = v.cache;
      const created = cache.created[l];
      const K = Math.max(1, v.budgetBlocks);
      const mx = maxScore(l, created);
      const value = (b: number) => (Math.max(0, score.get(l, b)) / mx) * (1 / (1 + (lastUse[l * M + b] < 0 ? now + 1 : now - lastUse[l * M + b])));
      const stats = normStats(l, created);
      const x = new Float64Array(FEATURES);
      // page-in candidates by trigger
      let lowestResident = Infinity;
      for (let b = 0; b < created; b++) if (cache.tierOf(l, b) === 0) lowestResident = Math.min(lowestResident, Math.max(0, score.get(l, b)) / mx);
      const cands: [number, number, number][] = [];
      for (let b = 0; b < created; b++) {
        if (cache.tierOf(l, b) <= 0) continue;
        features(v, l, b, mx, stats, x, 0);
        const p = tree.probability(x);
        const i = l * M + b;
        const recent = lastUse[i] >= 0 && lastSeen[i] - lastUse[i] <= o.recent_steps && lastUse[i] === lastSeen[i];
        const important = Math.max(0, score.get(l, b)) / mx > lowestResident;
        if (p > 0.5 || recent || important) cands.push([b, p + value(b), p]);
      }
      cands.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      const victims = () => {
        let best = -1;
        for (let b = 0; b < created; b++) if (cache.tierOf(l, b) === 0 && (best < 0 || value(b) < value(best))) best = b;
        return best;
      };
      // room for the new page, then page-ins (each replacing the lowest-value resident page if it is worth less)
      while (cache.countIn(l, 0) + incoming > K) {
        const vb = victims();
        if (vb < 0 || !act.demote(l, vb, chain[0], 16)) break;
      }
      if (!pageIn) return;
      for (let i = 0; i < Math.min(o.page_in, cands.length); i++) {
        const [b, , p] = cands[i];
        if (cache.countIn(l, 0) + incoming >= K) {
          const vb = victims();
          if (vb < 0 || value(vb) >= value(b) + 1e-12 || !act.demote(l, vb, chain[0], 16)) continue;
        }
        if (act.promote(l, b) && p > 0.5) predictedFor[l * M + b] = t;
      }
      // backing tiers: capacity pressure, then LRU age / low importance, one tier down
      let budget = o.demote_max;
      for (let k = 0; k + 1 < chain.length; k++) {
        const t = cache.tierIndex(chain[k]);
        const quota = Math.floor(quotaFactor[chain[k]] * K);
        const inTier: number[] = [];
        for (let b = 0; b < created; b++) if (cache.tierOf(l, b) === t) inTier.push(b);
        inTier.sort((a, b) => value(a) - value(b) || a - b);
        let over = inTier.length - quota;
        for (const b of inTier) {
          const i = l * M + b;
          const aged = (lastUse[i] < 0 ? now : now - lastUse[i]) >= o.age_steps;
          const low = Math.max(0, score.get(l, b)) / mx < o.low_importance;
          if (over > 0) {
            if (act.demote(l, b, chain[k + 1], 16)) over--;
          } else if ((aged || low) && budget > 0) {
            if (act.demote(l, b, chain[k + 1], 16)) budget--;
          }
        }
      }
      // remember the features the attended pages had when this decision was taken (training inputs)
      for (let b = 0; b < created; b++) {
        if (cache.tierOf(l, b) !== 0) continue;
        features(v, l, b, mx, stats, feats, (l * M + b) * FEATURES);
        featStep[l * M + b] = t;
      }
    };

    return {
      name: 'dpnc',
      report: () => ({
        predictor_accuracy: tree.accuracy,
        predictor_base_rate: tree.baseRate,
        predictor_samples: tree.seen,
        predictor_splits: tree.splits,
        prefetch_predictions: predictions,
        prefetch_precision: predictions ? predictedUsed / predictions : Number.NaN,
      }),
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        now = Math.max(0, v.step);
        norms[l].set(v.keyNorms.subarray(0, Math.min(M, v.keyNorms.length)));
        // this layer: room for its new page (its page-ins were issued one layer ahead, except with one layer)
        manage(v, act, l, v.newBlock ? 1 : 0, L === 1 || v.step < 0, Math.max(0, v.step));
        if (v.step < 0) return;
        for (let b = 0; b < v.cache.created[l]; b++) if (v.cache.tierOf(l, b) > 0) act.skip(b);
        if (L === 1) return;
        // one layer ahead: the next layer's page-ins overlap this layer's compute
        const nextStep = l + 1 < L ? v.step : v.step + 1;
        if (nextStep >= setup.header.steps) return;
        const nl = l + 1 < L ? l + 1 : 0;
        const nBlocksThen = Math.ceil((v.contextTokens + (nextStep - v.step)) / setup.blockSize);
        manage(v, act, nl, nBlocksThen > v.cache.created[nl] ? 1 : 0, true, nextStep);
      },
      observe(obs: Observation) {
        const l = obs.layer;
        score.observe(obs);
        const mass = new Float64Array(obs.nBlocks);
        let max = obs.uniform;
        for (let i = 0; i < obs.mass.length; i++) max = Math.max(max, obs.mass[i]);
        if (obs.idx === null) mass.set(obs.mass.subarray(0, obs.nBlocks));
        else {
          mass.fill(obs.uniform);
          for (let i = 0; i < obs.idx.length; i++) mass[obs.idx[i]] = obs.mass[i];
        }
        const thr = o.use_threshold * max;
        const step = Math.max(0, obs.step);
        for (let b = 0; b < obs.nBlocks; b++) {
          if (!obs.attended[b]) continue;
          const i = l * M + b;
          const used = mass[b] >= thr && mass[b] > 0;
          if (obs.step >= 0 && featStep[i] === step) {
            tree.learn(feats.subarray(i * FEATURES, (i + 1) * FEATURES), used);
            if (predictedFor[i] === step) {
              predictions++;
              if (used) predictedUsed++;
            }
          }
          seen[i]++;
          lastSeen[i] = step;
          if (used) {
            uses[i]++;
            lastUse[i] = step;
          }
        }
      },
    };
  },
};
