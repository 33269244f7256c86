import { describe, expect, it } from 'vitest';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { ValidationError } from '../../sim/hardware/validation-error.js';
import { validProfile } from './valid-profile.js';

/** The problems validateProfile reports for `value` (each without the source prefix). */
function problems(value: unknown): readonly string[] {
  try {
    validateProfile(value, 'my.json');
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).problems;
  }
  return [];
}

describe('validateProfile', () => {
  it('accepts a valid profile and returns it', () => {
    const p = validProfile();
    expect(validateProfile(p, 'my.json')).toBe(p);
  });

  it('names a missing field by its path', () => {
    const p = validProfile() as unknown as { tiers: Record<string, unknown>[] };
    delete p.tiers[1]!.capacity_GiB;
    expect(problems(p)).toEqual(['tiers[1].capacity_GiB is missing']);
  });

  it('reports a negative number with the file, the path and the value', () => {
    const p = validProfile();
    p.tiers[2]!.read_GBps = -3;
    expect(() => validateProfile(p, 'my.json')).toThrowError(
      'my.json: tiers[2].read_GBps must be a number > 0 (got -3)',
    );
  });

  it('rejects wrong types and non-finite numbers, and zero where > 0 is needed', () => {
    const p = validProfile() as unknown as Record<string, any>;
    p.gpu.fp16_TFLOPs = '800';
    p.tiers[0].capacity_GiB = 0;
    p.links[1].a_to_b.GBps = Number.POSITIVE_INFINITY;
    p.links[1].b_to_a.alpha_us = Number.NaN;
    expect(problems(p)).toEqual([
      'gpu.fp16_TFLOPs must be a number > 0 (got "800")',
      'tiers[0].capacity_GiB must be a number > 0 (got 0)',
      'links[1].a_to_b.GBps must be a number > 0 (got Infinity)',
      'links[1].b_to_a.alpha_us must be a number >= 0 (got NaN)',
    ]);
  });

  it('lets latencies, alphas, launch time and reserved memory be 0 but not negative', () => {
    const p = validProfile();
    expect(p.gpu.reserved_GiB).toBe(0);
    expect(p.tiers[0]!.read_latency_us).toBe(0);
    expect(p.links[0]!.b_to_a.alpha_us).toBe(0);
    expect(problems(p)).toEqual([]);
    p.gpu.reserved_GiB = -1;
    p.tiers[3]!.write_latency_us = -0.5;
    expect(problems(p)).toEqual([
      'gpu.reserved_GiB must be a number >= 0 (got -1)',
      'tiers[3].write_latency_us must be a number >= 0 (got -0.5)',
    ]);
  });

  it('names a link end that is not a tier, listing the tiers, and says nothing more', () => {
    const p = validProfile();
    p.links[0]!.b = 'nvm';
    expect(() => validateProfile(p, 'my.json')).toThrowError(
      'my.json: links[0].b "nvm" is not a tier (tiers: hbm, dram, cxl, nvme, hdd)',
    );
    expect(problems(p)).toHaveLength(1);
  });

  it('names a tier that no link reaches', () => {
    const p = validProfile();
    p.links.pop();
    expect(problems(p)).toEqual(['tiers[4] "hdd" is not reachable from "hbm" through links (add a link to it)']);
  });

  it('rejects an unknown field and suggests the field it resembles', () => {
    const p = validProfile() as unknown as { tiers: Record<string, unknown>[] };
    p.tiers[0]!.capacity_gib = p.tiers[0]!.capacity_GiB;
    delete p.tiers[0]!.capacity_GiB;
    expect(problems(p)).toEqual([
      'tiers[0].capacity_gib is not a known field (did you mean "capacity_GiB"?) ' +
        '(fields: name, kind, capacity_GiB, read_GBps, write_GBps, read_latency_us, write_latency_us)',
      'tiers[0].capacity_GiB is missing',
    ]);
    const q = validProfile() as unknown as Record<string, unknown>;
    q.notes = 'x';
    expect(problems(q)).toEqual([
      'notes is not a known field (fields: schema, name, description, gpu, tiers, links, sources)',
    ]);
  });

  it('checks schema, the first tier kind, tier kinds and unique names', () => {
    const p = validProfile() as unknown as Record<string, any>;
    p.schema = 'kvtier-hardware/v2';
    p.tiers[0].kind = 'dram';
    p.tiers[2].kind = 'optane';
    p.tiers[3].name = 'dram';
    expect(problems(p)).toEqual([
      'schema must be "kvtier-hardware/v1" (got "kvtier-hardware/v2")',
      'tiers[0].kind must be "hbm": tiers[0] is the GPU\'s own memory (got "dram")',
      'tiers[2].kind must be one of hbm, dram, cxl, nvme, hdd, remote (got "optane")',
      'tiers[3].name "dram" repeats tiers[1].name',
      'links[2].b "nvme" is not a tier (tiers: hbm, dram, cxl, hdd)',
    ]);
  });

  it('requires copy_engines to be a positive integer', () => {
    const p = validProfile();
    p.links[0]!.copy_engines = 1.5;
    p.links[1]!.copy_engines = 0;
    expect(problems(p)).toEqual([
      'links[0].copy_engines must be an integer >= 1 (got 1.5)',
      'links[1].copy_engines must be an integer >= 1 (got 0)',
    ]);
  });

  it('rejects a link to itself, a cycle, and a repeated link name', () => {
    const p = validProfile();
    p.links.push({ ...p.links[2]!, name: 'gds', a: 'hbm', b: 'nvme' });
    p.links.push({ ...p.links[2]!, name: 'pcie', a: 'cxl', b: 'cxl' });
    expect(problems(p)).toEqual([
      'links[4] ("hbm"-"nvme") closes a cycle: links must form a tree rooted at tiers[0], so that each pair of tiers has one route',
      'links[5].name "pcie" repeats links[0].name',
      'links[5] connects "cxl" to itself',
    ]);
  });

  it('accepts a single HBM tier with no links, but not an empty tier list', () => {
    const p = validProfile();
    p.tiers = p.tiers.slice(0, 1);
    p.links = [];
    expect(problems(p)).toEqual([]);
    p.tiers = [];
    expect(problems(p)).toEqual(['tiers must not be empty']);
  });

  it('requires sources to map field paths to strings', () => {
    const p = validProfile() as unknown as Record<string, any>;
    p.sources['tiers[0].read_GBps'] = 42;
    expect(problems(p)).toEqual(['sources["tiers[0].read_GBps"] must be a non-empty string (got 42)']);
  });

  it('answers a value that is not an object at all', () => {
    expect(problems(null)).toEqual(['the top level must be an object (got null)']);
    expect(problems([])).toEqual(['the top level must be an object (got an array)']);
  });

  it('collects every problem into one error, one line each, each naming the file', () => {
    const p = validProfile() as unknown as Record<string, any>;
    delete p.gpu;
    p.tiers[1].write_GBps = -1;
    p.links[3].copy_engines = 'two';
    let message = '';
    try {
      validateProfile(p, 'bad.json');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.split('\n')).toEqual([
      'bad.json: gpu is missing',
      'bad.json: tiers[1].write_GBps must be a number > 0 (got -1)',
      'bad.json: links[3].copy_engines must be an integer >= 1 (got "two")',
    ]);
  });
});
