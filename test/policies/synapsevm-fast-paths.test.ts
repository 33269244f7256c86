/**
 * SynapseVM's shortcuts (SynapsePaths), each replayed against the plain computation it stands for.
 *
 * - SynapseScore keeps the H2O score as AttentionScore does, and observeAttendedAll() (a listed
 *   observation that attended every block) gives the same scores and finds, in the same pass, what
 *   the policy's other parts test the listed blocks for: random observations (listed masses below the
 *   uniform share, listed blocks out of order, repeated or at nBlocks and above with the mask set
 *   there, masses that are not finite, a negative share) against AttentionScore and a test per fact.
 * - The forecast finds a listed mass by walking a layer's list (ascending) alongside the blocks it
 *   reads, or by a search: observations of every block in listed form, whose shares are often large
 *   enough that a layer keeps no high blocks (the learning then reads the previous layer's list),
 *   with the listed facts handed in or not, against the definitions one block at a time.
 * - fusedObserve, promoteFromHigh, l2FromOrder: whole replays against the policy with them off, on generated traces (several KV
 *   groups, a needle, dense rows, few listed blocks) and the bundled ones, in both modes, at budgets
 *   where HBM holds a few, most or nearly all of the blocks.
 * - The parts with no switch (the L2 bitset, the cold orders' keys, the forecast's list walks, the
 *   short-list sort, the staging shortcuts): whole replays on the bundled traces whose results' digests
 *   are those of the policy before them (commit 2ed517a).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AttentionScore } from '../../policies/attention-score.js';
import type { Observation, PolicySetup } from '../../policies/policy.js';
import { LISTED_ASCENDING, LISTED_BELOW, LISTED_FELL, LISTED_FINITE, SynapseScore } from '../../policies/synapse-score.js';
import { SynapseForecast } from '../../policies/synapse-forecast.js';
import { createSynapseVm, synapseVm, type SynapsePaths } from '../../policies/synapsevm.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { registerPolicy } from '../../policies/registry.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { simulate } from '../../sim/run.js';
import { generateTrace } from '../../traces/generator.js';

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** a listed observation of layer l over n blocks, every block below n attended (maxBlocks M) */
function attendedAll(l: number, n: number, M: number, rnd: () => number): Observation {
  const kind = rnd();
  const k = Math.floor(rnd() * Math.min(n + 3, 12));
  let idx: number[];
  if (kind < 0.5) {
    // ascending, below n
    const picked = new Set<number>();
    while (picked.size < Math.min(k, n)) picked.add(Math.floor(rnd() * n));
    idx = [...picked].sort((a, b) => a - b);
  } else {
    // any order, repeats, blocks at or above n (below M)
    idx = Array.from({ length: k }, () => Math.floor(rnd() * Math.min(M, n + 3)));
  }
  const uniform = rnd() < 0.05 ? -0.01 : rnd() < 0.1 ? 0 : rnd() * 0.05;
  const mass = idx.map(() => {
    const r = rnd();
    if (r < 0.03) return Number.NaN;
    if (r < 0.05) return Number.POSITIVE_INFINITY;
    // below the share, at it, above it
    return r < 0.2 ? uniform * rnd() : r < 0.3 ? uniform : uniform + rnd() * 0.3;
  });
  const attended = new Uint8Array(M);
  attended.fill(1, 0, n);
  // (the mask at and above n: set for some blocks)
  for (let b = n; b < M; b++) attended[b] = rnd() < 0.5 ? 1 : 0;
  return {
    step: 0,
    layer: l,
    nBlocks: n,
    idx: Uint32Array.from(idx),
    mass: Float32Array.from(mass),
    uniform: Math.fround(uniform),
    attended,
    attendedCount: n,
  } as unknown as Observation;
}

describe('SynapseScore', () => {
  it('gives the scores of AttentionScore, and observeAttendedAll the facts of the listed blocks', () => {
    const rnd = rng(12);
    const L = 3;
    const M = 24;
    let facts = 0;
    for (let trial = 0; trial < 60; trial++) {
      const ref = new AttentionScore(L, M);
      const mine = new SynapseScore(L, M);
      const n0 = 1 + Math.floor(rnd() * 10);
      for (let t = 0; t < 40; t++) {
        const l = Math.floor(rnd() * L);
        const n = Math.min(M - 2, n0 + t / 4);
        const obs = attendedAll(l, Math.floor(n), M, rnd);
        let bits: number;
        if (rnd() < 0.2) {
          // the general entry point, with some blocks not attended
          const o = { ...obs, attended: obs.attended.slice(), attendedCount: 0 } as Observation;
          for (let b = 0; b < o.nBlocks; b++) if (rnd() < 0.2) (o.attended as Uint8Array)[b] = 0;
          for (let b = 0; b < o.nBlocks; b++) (o as { attendedCount: number }).attendedCount += o.attended[b];
          ref.observe(o);
          mine.observe(o);
          bits = -1;
        } else {
          ref.observe(obs);
          bits = mine.observeAttendedAll(obs);
        }
        // (every block's raw score and score, compared with Object.is; one expect for the layer's blocks)
        const differ: string[] = [];
        for (let b = 0; b < M; b++) {
          if (!Object.is(mine.raw(l, b), ref.raw(l, b))) differ.push(`raw ${l}:${b}`);
          if (!Object.is(mine.get(l, b), ref.get(l, b))) differ.push(`get ${l}:${b}`);
        }
        expect(differ).toEqual([]);
        expect(mine.known(l)).toBe(ref.known(l));
        expect(Object.is(mine.offsetOf(l), ref.offsetOf(l))).toBe(true);
        if (bits < 0) continue;
        const idx = Array.from(obs.idx!);
        const mass = Array.from(obs.mass);
        const u = obs.uniform;
        // a raw score may fall: the share below 0, or an attended listed block's mass below it (or not a number)
        const fell = !(u >= 0) || idx.some((b, i) => obs.attended[b] === 1 && !(mass[i] - u >= 0));
        expect((bits & LISTED_FELL) !== 0, 'fell').toBe(fell);
        expect((bits & LISTED_ASCENDING) !== 0, 'ascending').toBe(idx.every((b, i) => i === 0 || b > idx[i - 1]));
        expect((bits & LISTED_BELOW) !== 0, 'below').toBe(idx.every((b) => b < obs.nBlocks));
        expect((bits & LISTED_FINITE) !== 0, 'finite').toBe(mass.every((m) => Number.isFinite(m)));
        facts |= bits;
        facts |= ~bits << 4;
      }
    }
    // (every fact seen set and unset)
    expect(facts & 0xff).toBe(0xff);
  });
});

describe('synapsevm forecast in listed form', () => {
  it('masses, self scores, learned overlaps and candidates as defined, the previous layer read from its list', () => {
    const rnd = rng(29);
    const L = 3;
    const M = 70;
    let listedPrev = 0;
    for (let trial = 0; trial < 40; trial++) {
      const H = 1 + rnd() * 2;
      const rho = 0.3;
      const f = new SynapseForecast(L, M, { historyWeight: 1, heavyRatio: H, simRate: rho });
      const cur = Array.from({ length: L }, () => new Array<number>(M).fill(0));
      const curStep = new Array<number>(L).fill(-2);
      const simC = new Array<number>(L).fill(0);
      const simS = new Array<number>(L).fill(1);
      let n = 8 + Math.floor(rnd() * 20);
      for (let step = 0; step < 8; step++) {
        for (let l = 0; l < L; l++) {
          const theta = H / n;
          // listed blocks ascending, every block attended; the share below theta, often at or above 1 / (n + 1) of H
          const idx = Array.from({ length: n }, (_, b) => b).filter(() => rnd() < 0.35);
          const uniform = Math.fround(theta * (rnd() < 0.5 ? 0.3 : 0.9 + 0.099 * rnd()));
          const mass = idx.map(() => Math.fround(rnd() < 0.5 ? rnd() * theta : theta * (1 + 3 * rnd())));
          const obs = { step, layer: l, nBlocks: n, idx: Uint32Array.from(idx), mass: Float32Array.from(mass), uniform, groups: [], attended: new Uint8Array(M).fill(1, 0, n), attendedCount: n } as unknown as Observation;
          const judged = Uint8Array.from({ length: M }, () => (rnd() < 0.7 ? 1 : 0));
          const prev = l > 0 ? l - 1 : L - 1;
          const crossKnown = curStep[prev] === (l > 0 ? step : step - 1);
          const m = Array.from({ length: n }, (_, b) => {
            const i = idx.indexOf(b);
            return i >= 0 ? mass[i] : uniform;
          });
          // (the reference: history weight 1, so the self score is the latest mass)
          let [iC, uC, iS, uS] = [0, 0, 0, 0];
          for (let b = 0; b < n; b++) {
            if (!judged[b]) continue;
            const h = m[b] >= theta;
            const c = crossKnown && cur[prev][b] >= theta;
            const sf = cur[l][b] >= theta;
            iC += +(h && c);
            uC += +(h || c);
            iS += +(h && sf);
            uS += +(h || sf);
          }
          if (crossKnown && uC > 0) simC[l] = (1 - rho) * simC[l] + (rho * iC) / uC;
          if (uS > 0) simS[l] = (1 - rho) * simS[l] + (rho * iS) / uS;
          if (crossKnown && f.lastStep(prev) >= 0 && f.latestHigh(prev, theta) < 0) listedPrev++;
          f.observe(obs, judged, rnd() < 0.5 ? LISTED_ASCENDING | LISTED_BELOW | LISTED_FINITE : 0);
          for (let b = 0; b < M; b++) cur[l][b] = b < n ? m[b] : 0;
          curStep[l] = step;
          for (let j = 0; j < L; j++) {
            expect(Array.from({ length: M }, (_, b) => f.lastMass(j, b))).toEqual(cur[j]);
            expect(Array.from({ length: M }, (_, b) => f.selfScore(j, b))).toEqual(cur[j]);
          }
          expect([f.simCross[l], f.simSelf[l]]).toEqual([simC[l], simS[l]]);
          // the next layer's candidates against its scores
          const lNext = (l + 1) % L;
          const sNext = lNext === 0 ? step + 1 : step;
          const alpha = f.alpha(lNext, sNext);
          const nDec = n + Math.floor(rnd() * 2);
          const th = f.threshold(nDec);
          const mask = Uint8Array.from({ length: M }, () => (rnd() < 0.8 ? 1 : 0));
          const ids = new Int32Array(M);
          const keys = new Float64Array(M);
          const count = f.candidates(lNext, nDec, alpha, th, mask, ids, keys);
          const want = Array.from({ length: nDec }, (_, b) => b).filter((b) => mask[b] && f.score(lNext, b, sNext, alpha) >= th);
          expect([...ids.subarray(0, count)].sort((x, y) => x - y)).toEqual(want);
          // (each candidate's key at its place)
          for (let i = 0; i < count; i++) expect(keys[i]).toBe(-f.score(lNext, ids[i]!, sNext, alpha));
        }
        n += Math.floor(rnd() * 3);
      }
    }
    // (the learning read the previous layer in listed form without its high blocks many times)
    expect(listedPrev).toBeGreaterThan(50);
  });
});

describe('synapsevm: the shortcuts against the plain computation (whole replays)', () => {
  registerBuiltinPolicies();
  const variant = (name: string, paths: Partial<SynapsePaths>) =>
    registerPolicy({ ...synapseVm, name, create: (o: Parameters<typeof createSynapseVm>[0], setup: PolicySetup) => createSynapseVm(o, setup, paths) }, { override: true });
  variant('synapsevm-plain', { fusedObserve: false, promoteFromHigh: false, l2FromOrder: false });
  const dir = mkdtempSync(join(tmpdir(), 'kvtier-synapse-paths-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const generated = (name: string, input: Record<string, unknown>) => () => {
    const t = join(dir, `${name}.kvt`);
    generateTrace(t, { model: 'llama-3-8b', layers: 32, encoding: 'topk', ...input });
    return t;
  };
  const traces: [string, () => string][] = [
    ['a generated trace', generated('g', { prompt_tokens: 2500, steps: 20, seed: 5, topk: 48 })],
    ['a generated trace with topic shifts', generated('t', { prompt_tokens: 2500, steps: 24, seed: 11, topk: 32 })],
    ['a generated 4-group trace', generated('k4', { prompt_tokens: 2000, steps: 20, seed: 2, kv_groups: 4 })],
    ['a generated needle trace', generated('n', { prompt_tokens: 2500, steps: 24, seed: 3, topk: 32, needle: {} })],
    ['a generated dense trace', generated('d', { prompt_tokens: 1500, steps: 16, seed: 7, encoding: 'dense' })],
    ['a generated trace with few listed blocks', generated('f', { prompt_tokens: 2000, steps: 24, seed: 8, topk: 4 })],
    ['the bundled 2k trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-default.kvt', import.meta.url))],
    ['the bundled 2k needle trace', () => fileURLToPath(new URL('../../traces/bundled/llama-3-8b-2k-needle.kvt', import.meta.url))],
  ];
  for (const [what, make] of traces) {
    it(`same replay as the plain computation: ${what}`, () => {
      const trace = make();
      for (const hbm_budget of ['5%', '20%', '60%']) {
        for (const policy_options of [{}, { mode: 'predictive' }, { history_weight: 0.5, promote_blocks: 4, heavy_ratio: 6 }]) {
          const run = (policy: string) => simulate({ trace, policy, policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
          const fast = run('synapsevm');
          const plain = run('synapsevm-plain');
          expect(fast.steps, `${hbm_budget} ${JSON.stringify(policy_options)}`).toEqual(plain.steps);
          expect({ ...fast.summary, policy: '' }).toEqual({ ...plain.summary, policy: '' });
        }
      }
    });
  }
  it('same replay as the plain computation where L3 fills during an L2 overflow (which victims move then depends on the order)', () => {
    const trace = generated('fill', { prompt_tokens: 1024, steps: 64, seed: 5, needle: {} })();
    const hw = loadHardware('h100-pcie5');
    for (const t of hw.tiers) if (t.name === 'cxl' || t.name === 'nvme') t.capacity_GiB = 0.0003;
    const hardware = join(dir, 'small-l3.json');
    writeFileSync(hardware, JSON.stringify(hw));
    const policy_options = { l2_tier: 'dram', l3_tier: 'cxl', l2_bits: 8, l3_bits: 2, mode: 'lossless', l2_factor: 1.5, stage_ratio: 4 };
    const run = (policy: string) => simulate({ trace, policy, policy_options, hardware, hbm_budget: '20%', trace_steps: 0 });
    const fast = run('synapsevm');
    const plain = run('synapsevm-plain');
    // (demotions to the full L3 were refused)
    expect((fast.summary as unknown as { refused_actions: Record<string, number> }).refused_actions.demote).toBeGreaterThan(0);
    expect(fast.steps).toEqual(plain.steps);
    expect({ ...fast.summary, policy: '' }).toEqual({ ...plain.summary, policy: '' });
  });
});

describe('synapsevm: the same runs as before its speed passes', () => {
  it('digests of whole replays on the bundled traces equal those of the policy at 2ed517a (timed with listed prefetches in a row as one stage)', () => {
    registerBuiltinPolicies();
    const bundled = (name: string) => fileURLToPath(new URL(`../../traces/bundled/${name}`, import.meta.url));
    const digest = (trace: string, hbm_budget: string, policy_options: Record<string, unknown>) => {
      const r = simulate({ trace: bundled(trace), policy: 'synapsevm', policy_options, hardware: 'h100-pcie5', hbm_budget, trace_steps: 0 });
      return createHash('sha256').update(JSON.stringify(r.summary)).update(JSON.stringify(r.steps)).digest('hex').slice(0, 12);
    };
    expect(digest('llama-3-8b-2k-default.kvt', '20%', {})).toBe('1762f1717ec6');
    expect(digest('llama-3-8b-2k-needle.kvt', '10%', {})).toBe('f79c958453fe');
    expect(digest('llama-3-8b-2k-default.kvt', '40%', { mode: 'predictive' })).toBe('1dfc747413b0');
  });
});
