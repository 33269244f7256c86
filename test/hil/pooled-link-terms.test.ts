import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostLink, modelSlug, poolByModel, poolOfModel, readPool, withPooledLinkTerms, type PoolMember } from '../../hil/validate/pooled-link-terms.js';
import type { HardwareProfile, LinkDirection, LinkSpec } from '../../sim/hardware/profile.js';

const tier = (name: string, kind: HardwareProfile['tiers'][number]['kind']) => ({ name, kind, capacity_GiB: 80, read_GBps: 1000, write_GBps: 1000, read_latency_us: 0, write_latency_us: 0 });
const cxl: LinkSpec = { name: 'cxl', a: 'dram', b: 'cxl', a_to_b: { alpha_us: 1, GBps: 25 }, b_to_a: { alpha_us: 1, GBps: 25 }, copy_engines: 4 };
/** a profile whose host link carries `h2d` and `d2h`, written HBM -> DRAM (`hbmFirst`) or the other way */
const profile = (h2d: LinkDirection, d2h: LinkDirection, o: { hbmFirst?: boolean; gpu?: string; batch?: number } = {}): HardwareProfile => ({
  schema: 'kvtier-hardware/v1',
  name: 't',
  description: '',
  gpu: { name: o.gpu ?? 'NVIDIA H200', hbm_bandwidth_GBps: 4000, fp16_TFLOPs: 790, kernel_launch_us: 3, reserved_GiB: 1, ...(o.batch !== undefined ? { copy_batch_us: o.batch } : {}) },
  tiers: [tier('hbm', 'hbm'), tier('dram', 'dram'), tier('cxl', 'cxl')],
  links: [o.hbmFirst === false ? { name: 'pcie', a: 'dram', b: 'hbm', a_to_b: h2d, b_to_a: d2h, copy_engines: 1 } : { name: 'pcie', a: 'hbm', b: 'dram', a_to_b: d2h, b_to_a: h2d, copy_engines: 1 }, cxl],
  sources: { 'links[0].b_to_a.alpha_us': 'calibrated' },
});
const member = (file: string, p: HardwareProfile): PoolMember => ({ file, profile: p });

describe('withPooledLinkTerms', () => {
  it("sets each host-link term the target has to its median over the pool, H2D and D2H apart whichever way a profile writes the link", () => {
    const target = profile({ alpha_us: 2.77, GBps: 55.4, spread_us: 0.024, adjacent_us: 0.209 }, { alpha_us: 2.15, GBps: 53, switch_us: 3.72 }, { batch: 1.97 });
    const before = JSON.stringify(target);
    const pool = [
      member('a.json', profile({ alpha_us: 2.8, GBps: 55, spread_us: 0.059, adjacent_us: 0.205 }, { alpha_us: 2.2, GBps: 52, switch_us: 3.5 }, { batch: 1.5 })),
      // written DRAM -> HBM: its a_to_b is H2D
      member('b.json', profile({ alpha_us: 2.9, GBps: 54, spread_us: 0.088 }, { alpha_us: 2.3, GBps: 51, switch_us: 4 }, { hbmFirst: false, batch: 2 })),
      member('c.json', profile({ alpha_us: 3.1, GBps: 56, spread_us: 0.065, adjacent_us: 0.185 }, { alpha_us: 2.1, GBps: 50, switch_us: 3.9 }, { batch: 1.35 })),
    ];
    const pooled = JSON.stringify(pool);
    const q = withPooledLinkTerms(target, pool, 't.json');
    expect(JSON.stringify(pool)).toBe(pooled);
    // H2D: alpha median of 2.8, 2.9, 3.1; GBps of 55, 54, 56; spread of 0.059, 0.088, 0.065; adjacent of the two that have it
    expect(q.links[0].b_to_a).toEqual({ alpha_us: 2.9, GBps: 55, spread_us: 0.065, adjacent_us: 0.195 });
    expect(q.links[0].a_to_b).toEqual({ alpha_us: 2.2, GBps: 51, switch_us: 3.9 });
    expect(q.gpu.copy_batch_us).toBe(1.5);
    // the other links and the target itself untouched
    expect(q.links[1]).toEqual(cxl);
    expect(JSON.stringify(target)).toBe(before);
    expect(q.sources['links[0].b_to_a.alpha_us']).toBe("the median of 3 profiles' alpha_us (a.json 2.8, b.json 2.9, c.json 3.1); t.json's own: 2.77");
    expect(q.sources['links[0].b_to_a.adjacent_us']).toBe("the median of 2 profiles' adjacent_us (a.json 0.205, c.json 0.185); t.json's own: 0.209");
    expect(q.sources['gpu.copy_batch_us']).toBe("the median of 3 profiles' copy_batch_us (a.json 1.5, b.json 2, c.json 1.35); t.json's own: 1.97");
  });

  it('keeps the terms the target does not have out, and a term no profile of the pool has as it is', () => {
    const target = profile({ alpha_us: 2.6, GBps: 53 }, { alpha_us: 2, GBps: 52, switch_us: 3 }, { hbmFirst: false });
    const q = withPooledLinkTerms(target, [member('a.json', profile({ alpha_us: 3, GBps: 55, spread_us: 0.07 }, { alpha_us: 2.4, GBps: 50 }))], 't.json');
    // written DRAM -> HBM: a_to_b is H2D
    expect(q.links[0].a_to_b).toEqual({ alpha_us: 3, GBps: 55 });
    expect(q.links[0].b_to_a).toEqual({ alpha_us: 2.4, GBps: 50, switch_us: 3 });
    expect(q.gpu.copy_batch_us).toBeUndefined();
    // one profile: its values, to 4 decimals (an even count takes the mean of the middle two)
    const two = withPooledLinkTerms(target, [member('a.json', profile({ alpha_us: 2.70001, GBps: 55 }, { alpha_us: 2, GBps: 50 })), member('b.json', profile({ alpha_us: 2.8, GBps: 54 }, { alpha_us: 2.1, GBps: 51 }))], 't.json');
    expect(two.links[0].a_to_b.alpha_us).toBe(2.75);
    expect(two.sources['links[0].a_to_b.alpha_us']).toBe("the median of 2 profiles' alpha_us (a.json 2.7, b.json 2.8); t.json's own: 2.6");
    const one = withPooledLinkTerms(target, [member('a.json', profile({ alpha_us: 3, GBps: 55 }, { alpha_us: 2.4, GBps: 50 }))], 't.json');
    expect(one.sources['links[0].a_to_b.GBps']).toBe("the median of one profile's GBps (a.json 55); t.json's own: 53");
  });

  it("pools gpu.copy_batch_us only where the target has it: the mean of the middle two for an even count, to 4 decimals", () => {
    const withBatch = (batch?: number) => profile({ alpha_us: 2.6, GBps: 53 }, { alpha_us: 2, GBps: 52 }, batch === undefined ? {} : { batch });
    const pool = [member('a.json', withBatch(1.23456)), member('b.json', withBatch(2)), member('c.json', withBatch())];
    expect(withPooledLinkTerms(withBatch(), pool, 't.json').gpu.copy_batch_us).toBeUndefined();
    // (1.23456 + 2) / 2 = 1.61728 -> 1.6173; c.json has none and is not counted
    const q = withPooledLinkTerms(withBatch(1.97), pool, 't.json');
    expect(q.gpu.copy_batch_us).toBe(1.6173);
    expect(q.sources['gpu.copy_batch_us']).toBe("the median of 2 profiles' copy_batch_us (a.json 1.2346, b.json 2); t.json's own: 1.97");
  });

  it('refuses an empty pool, a profile of another GPU and a profile without the host link, naming the file', () => {
    const t = profile({ alpha_us: 2.6, GBps: 53 }, { alpha_us: 2, GBps: 52 });
    expect(() => withPooledLinkTerms(t, [], 't.json')).toThrow(/t\.json: no profiles to pool the host link's terms over/);
    expect(() => withPooledLinkTerms(t, [member('h100.json', profile({ alpha_us: 2.6, GBps: 53 }, { alpha_us: 2, GBps: 52 }, { gpu: 'NVIDIA H100' }))], 't.json')).toThrow(/h100\.json: GPU "NVIDIA H100", not the "NVIDIA H200" of t\.json/);
    const noLink = { ...t, links: [cxl] };
    expect(() => withPooledLinkTerms(t, [member('x.json', noLink)], 't.json')).toThrow(/x\.json: no link between hbm and a DRAM tier/);
    expect(() => hostLink(noLink, 't.json')).toThrow(/t\.json: no link between hbm and a DRAM tier/);
  });
});

describe('readPool', () => {
  it('reads profile files, and names a file that is missing, not JSON or not a profile', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvtier-pool-'));
    const good = join(dir, 'a.json');
    writeFileSync(good, JSON.stringify(profile({ alpha_us: 2.6, GBps: 53 }, { alpha_us: 2, GBps: 52 })));
    expect(readPool([good])[0].profile.links[0].b_to_a.alpha_us).toBe(2.6);
    expect(() => readPool([join(dir, 'none.json')])).toThrow(/none\.json: not a readable JSON hardware profile/);
    writeFileSync(join(dir, 'bad.json'), '{"links": ');
    expect(() => readPool([join(dir, 'bad.json')])).toThrow(/bad\.json: not a readable JSON hardware profile/);
    writeFileSync(join(dir, 'other.json'), '{"a": 1}');
    expect(() => readPool([join(dir, 'other.json')])).toThrow(/other\.json: a is not a known field/);
  });
});

describe('poolOfModel, poolByModel', () => {
  const p = profile({ alpha_us: 2.6, GBps: 53 }, { alpha_us: 2, GBps: 52 });
  const pool = [member('runs/a/profiles/llama-3-8b.json', p), member('runs/b/profiles/llama-3-8b.json', p), member('runs/a/profiles/llama-2-7b.json', p), member('runs/a/profiles/kvtier-brown-gpt.json', p), member('runs/a/profiles/llama-3-8b.pooled.json', p)];
  it('takes the members named for a model as hil validate names its profiles (a model file by its name without .model.json)', () => {
    expect(modelSlug('llama-3-8b')).toBe('llama-3-8b');
    expect(modelSlug('../../traces/captured/kvtier-brown-gpt.model.json')).toBe('kvtier-brown-gpt');
    expect(modelSlug('my model.json')).toBe('my_model');
    expect(poolOfModel(pool, 'llama-3-8b').map((m) => m.file)).toEqual(['runs/a/profiles/llama-3-8b.json', 'runs/b/profiles/llama-3-8b.json']);
    expect(poolOfModel(pool, '/x/kvtier-brown-gpt.model.json').map((m) => m.file)).toEqual(['runs/a/profiles/kvtier-brown-gpt.json']);
    expect(poolOfModel(pool, 'llama-3-70b')).toEqual([]);
  });
  it('splits a pool by the models it prices, leaves out a model it has no profile for, and refuses a pool that prices none', () => {
    const by = poolByModel(pool, ['llama-3-8b', 'llama-3-70b', 'llama-2-7b']);
    expect([...by.keys()]).toEqual(['llama-3-8b', 'llama-2-7b']);
    expect(by.get('llama-2-7b')!.map((m) => m.file)).toEqual(['runs/a/profiles/llama-2-7b.json']);
    expect(() => poolByModel(pool.slice(0, 2), ['mistral-7b', 'x/qwen.model.json'])).toThrow(/^--copy-terms-from: no profile of the pool \(runs\/a\/profiles\/llama-3-8b\.json, runs\/b\/profiles\/llama-3-8b\.json\) is named for a model here .*: mistral-7b\.json, qwen\.json\)$/);
  });
});
