import { describe, expect, it } from 'vitest';
import { GiB } from '../../sim/hardware/profile.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { loadModel } from '../../sim/models/load-model.js';
import { findRoute, LinkLanes, routeTimeUs } from '../../serving/route-time.js';
import { modelWeightBytes, parseTierTokens, parseTokenCount, resolveServingTiers } from '../../serving/serving-tiers.js';
import { IterationCost, prefillPairs } from '../../serving/iteration-cost.js';
import { toyHardware, toyModel } from './helpers.js';

const hw = loadHardware('h100-pcie5');
const model = loadModel('llama-3-8b');

describe('serving tiers', () => {
  const perToken = 2 * 32 * 8 * 128 * 2; // K and V, 32 layers, 8 KV heads x 128, FP16
  const hbm = Math.floor(((79.18 - 3) * GiB - modelWeightBytes(model)) / perToken);

  it('sizes HBM after reserved memory and weights, the other tiers whole, in FP16 KV tokens', () => {
    const t = resolveServingTiers(hw, model);
    expect(t.map((x) => x.name)).toEqual(['hbm', 'dram', 'cxl', 'nvme']);
    expect(t.map((x) => x.capacityTokens)).toEqual([hbm, (256 * GiB) / perToken, (256 * GiB) / perToken, Math.floor((7153 * GiB) / perToken)]);
  });

  it('fills --capacity-tokens from HBM down; the lowest tier takes the rest, unbounded included', () => {
    expect(resolveServingTiers(hw, model, { capacityTokens: 3e6 }).map((x) => x.capacityTokens)).toEqual([hbm, 2097152, 3e6 - hbm - 2097152, 0]);
    expect(resolveServingTiers(hw, model, { capacityTokens: 1e5 }).map((x) => x.capacityTokens)).toEqual([1e5, 0, 0, 0]);
    expect(resolveServingTiers(hw, model, { capacityTokens: Infinity }).map((x) => x.capacityTokens)).toEqual([hbm, 2097152, 2097152, Infinity]);
    const t = resolveServingTiers(hw, model, { tierTokens: { hbm: 1000, cxl: 0 }, capacityTokens: 5000, tiers: ['hbm', 'dram', 'cxl'] });
    expect(t.map((x) => [x.name, x.capacityTokens])).toEqual([['hbm', 1000], ['dram', 4000], ['cxl', 0]]);
  });

  it('explains bad tier settings', () => {
    expect(() => resolveServingTiers(hw, model, { tierTokens: { gpu: 5 } })).toThrow('tier-tokens: "gpu" is not a tier of the prefix cache (tiers: hbm, dram, cxl, nvme)');
    expect(() => resolveServingTiers(hw, model, { tiers: ['dram', 'hbm'] })).toThrow(/the first tier must be the GPU's HBM/);
    expect(() => resolveServingTiers(hw, model, { tiers: ['hbm', 'tape'] })).toThrow(/has no tier "tape"/);
    expect(() => resolveServingTiers(loadHardware('rtx4090-pcie4'), loadModel('llama-3-70b'))).toThrow(/llama-3-70b .* leaves no room for KV/);
    expect(() => resolveServingTiers(hw, model, { capacityTokens: 0 })).toThrow('capacity-tokens must be > 0 (got 0)');
  });

  it('parses token counts and per-tier lists', () => {
    expect(['3000000', '3e6', '3M', '3m', '500k', '1.5G', 'unbounded'].map((s) => parseTokenCount(s, 'x'))).toEqual([3e6, 3e6, 3e6, 3e6, 5e5, 1.5e9, Infinity]);
    expect(() => parseTokenCount('lots', 'capacity-tokens')).toThrow('capacity-tokens: expected a token count (e.g. 3000000, 3e6, 3M or unbounded), got "lots"');
    expect(parseTierTokens('hbm=400000, dram=2M,nvme=unbounded')).toEqual({ hbm: 4e5, dram: 2e6, nvme: Infinity });
    expect(() => parseTierTokens('hbm')).toThrow('tier-tokens: expected NAME=TOKENS[,NAME=TOKENS...], got "hbm"');
  });
});

describe('routes and links', () => {
  it('routes NVMe to HBM through DRAM: latencies and alphas add, the slowest part sets the bandwidth', () => {
    const r = findRoute(hw, 'nvme', 'hbm');
    expect(r.hops).toEqual(['nvme:nvme->dram', 'pcie:dram->hbm']);
    expect(r.alpha_us).toBeCloseTo(90 + 0 + 2 + 5.93, 12); // nvme read latency, hbm write latency, link alphas
    expect(r.bytesPerUs).toBe(11.7e3); // nvme read 11.7 GB/s < link 12.6 < pcie 53.08
    expect(routeTimeUs(r, 11.7e6)).toBeCloseTo(97.93 + 1000, 9);
    expect(() => findRoute(hw, 'hbm', 'tape')).toThrow(/unknown tier "tape"/);
  });

  it('queues transfers first come, first served on a link direction; the other direction is free', () => {
    const lanes = new LinkLanes(toyHardware);
    // 1000 bytes at 1 GB/s = 1 us, plus alpha 3 (D2H) or 5 (H2D)
    expect(lanes.transfer('hbm', 'dram', 1000, 0)).toBe(4);
    expect(lanes.transfer('hbm', 'dram', 1000, 1)).toBe(8);
    expect(lanes.transfer('dram', 'hbm', 1000, 1)).toBe(7);
    expect(lanes.transfer('hbm', 'dram', 1000, 20)).toBe(24);
    expect(lanes.bytes).toEqual({ 'pcie:hbm->dram': 3000, 'pcie:dram->hbm': 1000 });
  });
});

describe('iteration cost (roofline per layer)', () => {
  it('is memory bound on the toy model: weights + KV read and written over bandwidth', () => {
    const c = new IterationCost(toyModel, toyHardware.gpu);
    expect(c.timeUs({ tokens: 8, pairs: prefillPairs(0, 8), kvReadTokens: 0 })).toBeCloseTo(1000.008, 9);
  });

  it('is compute bound for a long prefill of llama-3-8b on an H100', () => {
    const c = new IterationCost(model, hw.gpu);
    const tokens = 8192;
    const flops = tokens * 32 * model.flops_per_token_per_layer + prefillPairs(0, tokens) * 4 * 32 * 128 * 32;
    expect(prefillPairs(0, 4)).toBe(10);
    expect(prefillPairs(6, 2)).toBe(2 * 6 + 3);
    expect(c.timeUs({ tokens, pairs: prefillPairs(0, tokens), kvReadTokens: 0 })).toBeCloseTo(32 * 4 + flops / (790 * 1e6), 6);
  });
});
