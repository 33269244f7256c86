/**
 * A profile's host-link copy terms pooled over several calibrations: the HBM <-> DRAM link's fitted
 * terms per direction, and the copy batch cost, each replaced by its median over profiles of the same
 * GPU. A lease's calibration reads these terms from short batches of copies, and its readings move
 * from lease to lease more than the copy engine itself does (lab/data/hil/diag-2026-11-28f/); the
 * median of other leases' readings is one way to take that wander out. The terms are fitted to the
 * model's own copy layouts (its block sizes), so they are pooled per model: over profiles named for
 * that model as `hil validate` names them (profiles/MODEL.json).
 */
import * as fs from 'node:fs';
import { basename } from 'node:path';
import type { HardwareProfile, LinkDirection, LinkSpec } from '../../sim/hardware/profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { median } from '../timing/median.js';

/** the terms of a host-link direction a calibration fits (hil/calibrate), pooled here */
export const POOLED_LINK_TERMS = ['alpha_us', 'GBps', 'alpha_under_compute_us', 'GBps_under_compute', 'switch_us', 'switch_under_compute_us', 'spread_us', 'adjacent_us', 'bulk_GBps'] as const;

type PooledTerm = (typeof POOLED_LINK_TERMS)[number];

/** a profile of the pool and the file it came from (named in errors and sources) */
export interface PoolMember {
  file: string;
  profile: HardwareProfile;
}

/** the profiles of a pool, read and checked; a file that cannot be read or is not a profile is named */
export function readPool(files: readonly string[]): PoolMember[] {
  return files.map((file) => {
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new Error(`${file}: not a readable JSON hardware profile (${(e as Error).message})`);
    }
    return { file, profile: validateProfile(raw, file) };
  });
}

/** the file-name stem of a model's profile as `hil validate` writes it (profiles/STEM.json): a model name, or a model file's name without .model.json */
export const modelSlug = (model: string): string => model.replace(/(\.model)?\.json$/, '').replace(/^.*\//, '').replace(/[^A-Za-z0-9.+-]+/g, '_');

/** the members of `pool` calibrated for `model`: those whose file is named modelSlug(model).json */
export function poolOfModel(pool: readonly PoolMember[], model: string): PoolMember[] {
  const name = `${modelSlug(model)}.json`;
  return pool.filter((m) => basename(m.file) === name);
}

/**
 * `pool` split by the models it prices (poolOfModel); throws, naming the file names it expected, when
 * it prices none of `models`. A model the pool has no profile for keeps its calibrated terms.
 */
export function poolByModel(pool: readonly PoolMember[], models: readonly string[]): Map<string, PoolMember[]> {
  const out = new Map<string, PoolMember[]>();
  for (const m of models) {
    const own = poolOfModel(pool, m);
    if (own.length > 0) out.set(m, own);
  }
  if (out.size === 0) {
    throw new Error(`--copy-terms-from: no profile of the pool (${pool.map((m) => m.file).join(', ')}) is named for a model here (the copy terms are pooled per model, over files named as hil validate writes them: ${[...new Set(models.map((m) => `${modelSlug(m)}.json`))].join(', ')})`);
  }
  return out;
}

/**
 * Which models a split pool (poolByModel) priced, over which files, and which of `models` it left as
 * calibrated: "M over N profiles of that model (FILES); X as calibrated (no profile of the pool for it)".
 */
export function describePool(byModel: ReadonlyMap<string, readonly PoolMember[]>, models: readonly string[]): string {
  const each = [...byModel].map(([m, own]) => `${m} over ${own.length === 1 ? 'one profile' : `${own.length} profiles`} of that model (${own.map((x) => x.file).join(', ')})`);
  const kept = models.filter((m) => !byModel.has(m));
  return `${each.join('; ')}${kept.length ? `; ${kept.join(', ')} as calibrated (no profile of the pool for ${kept.length === 1 ? 'it' : 'them'})` : ''}`;
}

/** the HBM <-> DRAM link of a profile: its index, and which of its directions is H2D and which D2H */
export function hostLink(profile: HardwareProfile, source: string): { index: number; link: LinkSpec; h2d: 'a_to_b' | 'b_to_a'; d2h: 'a_to_b' | 'b_to_a' } {
  const hbm = profile.tiers[0].name;
  const dram = profile.tiers.find((t) => t.kind === 'dram')?.name;
  const index = profile.links.findIndex((l) => (l.a === hbm && l.b === dram) || (l.a === dram && l.b === hbm));
  if (dram === undefined || index < 0) throw new Error(`${source}: no link between ${hbm} and a DRAM tier`);
  const link = profile.links[index];
  // a_to_b leaves HBM when a is HBM
  return link.a === hbm ? { index, link, h2d: 'b_to_a', d2h: 'a_to_b' } : { index, link, h2d: 'a_to_b', d2h: 'b_to_a' };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;
/** whose values a source names: "one profile's", "3 profiles'" */
const profilesOf = (n: number) => (n === 1 ? "one profile's" : `${n} profiles'`);

/**
 * `target` with each POOLED_LINK_TERMS term of its HBM <-> DRAM link (H2D and D2H apart, whichever way
 * each profile writes the link) and its gpu.copy_batch_us at the median of that term over the pool
 * members that have it, to 4 decimals. Only terms `target` has are replaced (its calibration decides which terms its
 * model uses); a term no member has is kept. Every member must be of `target`'s GPU and have the link.
 * `source` names `target` in errors and in the sources it writes.
 */
export function withPooledLinkTerms(target: HardwareProfile, pool: readonly PoolMember[], source: string): HardwareProfile {
  if (pool.length === 0) throw new Error(`${source}: no profiles to pool the host link's terms over`);
  for (const m of pool) {
    if (m.profile.gpu.name !== target.gpu.name) throw new Error(`${m.file}: GPU "${m.profile.gpu.name}", not the "${target.gpu.name}" of ${source} (pool profiles of one GPU)`);
  }
  const own = hostLink(target, source);
  const members = pool.map((m) => ({ file: m.file, gpu: m.profile.gpu, ...hostLink(m.profile, m.file) }));
  const sources = { ...target.sources };
  const pooled = (dir: 'h2d' | 'd2h'): LinkDirection => {
    const key = own[dir];
    const out: LinkDirection = { ...own.link[key] };
    for (const term of POOLED_LINK_TERMS) {
      const mine = out[term as PooledTerm];
      if (mine === undefined) continue;
      const had = members.filter((m) => m.link[m[dir]][term as PooledTerm] !== undefined);
      if (had.length === 0) continue;
      const values = had.map((m) => m.link[m[dir]][term as PooledTerm]!);
      out[term as PooledTerm] = round(median(values));
      sources[`links[${own.index}].${key}.${term}`] = `the median of ${profilesOf(values.length)} ${term} (${had.map((m, i) => `${m.file} ${round(values[i])}`).join(', ')}); ${source}'s own: ${mine}`;
    }
    return out;
  };
  const links = target.links.slice();
  links[own.index] = { ...own.link, [own.h2d]: pooled('h2d'), [own.d2h]: pooled('d2h') };
  const gpu = { ...target.gpu };
  if (gpu.copy_batch_us !== undefined) {
    const had = members.filter((m) => m.gpu.copy_batch_us !== undefined);
    const values = had.map((m) => m.gpu.copy_batch_us!);
    if (values.length > 0) {
      sources['gpu.copy_batch_us'] = `the median of ${profilesOf(values.length)} copy_batch_us (${had.map((m, i) => `${m.file} ${round(values[i])}`).join(', ')}); ${source}'s own: ${gpu.copy_batch_us}`;
      gpu.copy_batch_us = round(median(values));
    }
  }
  return { ...target, gpu, links, sources };
}
