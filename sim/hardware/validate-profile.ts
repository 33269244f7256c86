import { FieldChecks, describe } from './field-checks.js';
import { checkTopology, type LinkEnds } from './check-topology.js';
import { ATTENTION_KERNELS, COPY_UNDER_COMPUTE, ISSUE_COST_FIELDS, TIER_KINDS, hasHostClock, type HardwareProfile } from './profile.js';
import { ValidationError } from './validation-error.js';

export const PROFILE_SCHEMA = 'kvtier-hardware/v1';

const PROFILE_FIELDS = ['schema', 'name', 'description', 'gpu', 'tiers', 'links', 'sources'] as const;
export const GPU_FIELDS = ['name', 'hbm_bandwidth_GBps', 'fp16_TFLOPs', 'kernel_launch_us', 'reserved_GiB'] as const;
/** optional per-kernel fits (profile.ts GpuSpec); absent = the generic roofline */
export const GPU_OPTIONAL_FIELDS = ['attention_launch_us', 'attention_GBps', 'attention_curve', 'attention_kernels', 'attention_waves', 'linear_launch_us', 'linear_GBps', 'kernel_slowdown_under_h2d', 'kernel_slowdown_under_d2h', 'convert_kernel_us', 'convert_kernel_under_compute_us', 'copy_under_compute', 'copy_batch_us', 'issue_copy_us', 'issue_record_us', 'issue_kernel_us', 'issue_convert_us', 'issue_attention_us', 'launch_queue_ops', 'host_convert_us', 'file_batch_host_us'] as const;
export const TIER_FIELDS = [
  'name',
  'kind',
  'capacity_GiB',
  'read_GBps',
  'write_GBps',
  'read_latency_us',
  'write_latency_us',
] as const;
export const LINK_FIELDS = ['name', 'a', 'b', 'a_to_b', 'b_to_a', 'copy_engines'] as const;
const DIRECTION_FIELDS = ['alpha_us', 'GBps'] as const;
const ATTENTION_WAVES_FIELDS = ['slots', 'blocks_per_split', 'warps_per_head', 'chunk_tokens', 'us_per_chunk', 'kernels'] as const;
const DIRECTION_OPTIONAL_FIELDS = ['alpha_under_compute_us', 'switch_us', 'switch_under_compute_us', 'spread_us', 'adjacent_us', 'GBps_under_compute', 'bulk_GBps', 'bulk_from_bytes', 'request_us', 'batch_us'] as const;

/**
 * Check a parsed JSON value against the kvtier-hardware/v1 shape (profile.ts) and return it typed.
 * Every problem is collected; one ValidationError lists them all, each line starting with `source`.
 */
export function validateProfile(value: unknown, source: string): HardwareProfile {
  const checks = new FieldChecks();
  const top = checks.object(value, '', PROFILE_FIELDS);
  if (top) {
    if ('schema' in top && top.schema !== PROFILE_SCHEMA) {
      checks.add(`schema must be "${PROFILE_SCHEMA}" (got ${describe(top.schema)})`);
    }
    checks.string(top, 'name', '');
    checks.string(top, 'description', '', true);
    if ('gpu' in top) checkGpu(top.gpu, 'gpu', checks);
    const tiers = checks.array(top, 'tiers', '');
    const links = checks.array(top, 'links', '', true);
    if (tiers) {
      const tierNames = tiers.map((t, i) => checkTier(t, `tiers[${i}]`, checks, i === 0));
      const linkEnds = links?.map((l, j) => checkLink(l, `links[${j}]`, checks));
      checkTopology({ tierNames, links: linkEnds }, checks);
    }
    checks.stringMap(top, 'sources', '');
  }
  if (checks.problems.length > 0) throw new ValidationError(source, checks.problems);
  return value as HardwareProfile;
}

/** Checks the `gpu` object at `path`. */
export function checkGpu(value: unknown, path: string, checks: FieldChecks): void {
  const gpu = checks.object(value, path, GPU_FIELDS, GPU_OPTIONAL_FIELDS);
  if (!gpu) return;
  checks.string(gpu, 'name', path);
  checks.number(gpu, 'hbm_bandwidth_GBps', path);
  checks.number(gpu, 'fp16_TFLOPs', path);
  checks.number(gpu, 'kernel_launch_us', path, '>=0');
  checks.number(gpu, 'reserved_GiB', path, '>=0');
  if ('attention_launch_us' in gpu) checks.number(gpu, 'attention_launch_us', path, '>=0');
  if ('attention_GBps' in gpu) checks.number(gpu, 'attention_GBps', path);
  if ('linear_launch_us' in gpu) checks.number(gpu, 'linear_launch_us', path, '>=0');
  if ('linear_GBps' in gpu) checks.number(gpu, 'linear_GBps', path);
  if ('convert_kernel_us' in gpu) checks.number(gpu, 'convert_kernel_us', path, '>=0');
  if ('convert_kernel_under_compute_us' in gpu) checks.number(gpu, 'convert_kernel_under_compute_us', path, '>=0');
  if ('copy_under_compute' in gpu) checks.oneOf(gpu, 'copy_under_compute', path, COPY_UNDER_COMPUTE);
  if ('copy_batch_us' in gpu) checks.number(gpu, 'copy_batch_us', path, '>=0');
  for (const k of ISSUE_COST_FIELDS) if (k in gpu) checks.number(gpu, k, path, '>=0');
  if ('launch_queue_ops' in gpu) checks.integer(gpu, 'launch_queue_ops', path, 1);
  if ('host_convert_us' in gpu) checks.number(gpu, 'host_convert_us', path, '>=0');
  if ('file_batch_host_us' in gpu) checks.number(gpu, 'file_batch_host_us', path, '>=0');
  // these act on the host clock, which runs only where an issue cost is above 0
  const clocked = hasHostClock(gpu);
  for (const k of ['launch_queue_ops', 'host_convert_us', 'file_batch_host_us'] as const) {
    if (k in gpu && !clocked) checks.add(`${path}.${k} needs the host clock: set one of ${ISSUE_COST_FIELDS.map((x) => `${path}.${x}`).join(', ')} above 0, or leave ${k} out`);
  }
  for (const k of ['kernel_slowdown_under_h2d', 'kernel_slowdown_under_d2h'] as const) {
    if (!(k in gpu)) continue;
    const v = gpu[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) {
      checks.add(`${path}.${k} must be a fraction between 0 and 1 (0: copies do not slow the kernels; 1: a kernel runs on for all the time it shared with copies), got ${describe(v)}`);
    }
  }
  if ('attention_curve' in gpu) checkCurve(gpu.attention_curve, `${path}.attention_curve`, checks);
  if ('attention_waves' in gpu) {
    const w = checks.object(gpu.attention_waves, `${path}.attention_waves`, ATTENTION_WAVES_FIELDS);
    if (w) {
      for (const k of ['slots', 'blocks_per_split', 'warps_per_head', 'chunk_tokens'] as const) checks.integer(w, k, `${path}.attention_waves`, 1);
      checks.number(w, 'us_per_chunk', `${path}.attention_waves`, '>=0');
      if ('kernels' in w) {
        const ks = w.kernels;
        if (!Array.isArray(ks) || !ks.includes('fp16') || ks.some((k) => !(ATTENTION_KERNELS as readonly unknown[]).includes(k)) || new Set(ks).size !== ks.length) {
          checks.add(`${path}.attention_waves.kernels must list the kernels that follow the rule, "fp16" among them, each once and one of ${ATTENTION_KERNELS.join(', ')} (got ${Array.isArray(ks) ? JSON.stringify(ks) : describe(ks)})`);
        }
      }
      if (!('attention_curve' in gpu)) checks.add(`${path}.attention_waves prices the tail wave on top of ${path}.attention_curve: give the curve, or leave attention_waves out`);
    }
  }
  if ('attention_kernels' in gpu) {
    const k = checks.object(gpu.attention_kernels, `${path}.attention_kernels`, [], ATTENTION_KERNELS);
    if (k) for (const name of ATTENTION_KERNELS) if (name in k) checkCurve(k[name], `${path}.attention_kernels.${name}`, checks);
  }
}

/** a measured time-vs-context curve: at least two {tokens, us} points, ascending in tokens */
function checkCurve(c: unknown, p: string, checks: FieldChecks): void {
  if (!Array.isArray(c) || c.length < 2) {
    checks.add(`${p} must be an array of at least two {tokens, us} points (got ${describe(c)})`);
    return;
  }
  c.forEach((pt, i) => {
    const o = checks.object(pt, `${p}[${i}]`, ['tokens', 'us']);
    if (!o) return;
    checks.number(o, 'tokens', `${p}[${i}]`);
    checks.number(o, 'us', `${p}[${i}]`);
    if (i > 0 && typeof o.tokens === 'number' && typeof c[i - 1]?.tokens === 'number' && !(o.tokens > c[i - 1].tokens)) {
      checks.add(`${p}[${i}].tokens must be above the previous point's (got ${o.tokens} after ${c[i - 1].tokens})`);
    }
  });
}

/** Checks one tier; returns its name (for the topology check) when that is a valid string. */
export function checkTier(value: unknown, path: string, checks: FieldChecks, first: boolean): string | undefined {
  const tier = checks.object(value, path, TIER_FIELDS);
  if (!tier) return undefined;
  const name = checks.string(tier, 'name', path);
  const kind = checks.oneOf(tier, 'kind', path, TIER_KINDS);
  if (first && kind !== undefined && kind !== 'hbm') {
    checks.add(`${path}.kind must be "hbm": tiers[0] is the GPU's own memory (got ${describe(kind)})`);
  }
  checks.number(tier, 'capacity_GiB', path);
  checks.number(tier, 'read_GBps', path);
  checks.number(tier, 'write_GBps', path);
  checks.number(tier, 'read_latency_us', path, '>=0');
  checks.number(tier, 'write_latency_us', path, '>=0');
  return name;
}

/** request_us: [request bytes, us] pairs, bytes positive integers strictly ascending, times finite and >= 0 */
function checkRequestUs(v: unknown, path: string, checks: FieldChecks): void {
  const form = 'a list of [request bytes, us] pairs ascending by bytes, e.g. [[12288, 25.1], [65536, 46.8]]';
  if (!Array.isArray(v) || v.length === 0) {
    checks.add(`${path}: expected ${form}`);
    return;
  }
  let prev = 0;
  v.forEach((pair: unknown, i) => {
    const ok = Array.isArray(pair) && pair.length === 2 && Number.isInteger(pair[0]) && pair[0] > prev && typeof pair[1] === 'number' && Number.isFinite(pair[1]) && pair[1] >= 0;
    if (!ok) checks.add(`${path}[${i}]: expected [bytes, us] with bytes an integer above ${prev} and us a number >= 0, got ${JSON.stringify(pair)} (${form})`);
    else prev = pair[0];
  });
}

/** Checks one link; returns its name and end names (those that are valid strings). */
export function checkLink(value: unknown, path: string, checks: FieldChecks): LinkEnds {
  const link = checks.object(value, path, LINK_FIELDS);
  if (!link) return {};
  const out = {
    name: checks.string(link, 'name', path),
    a: checks.string(link, 'a', path),
    b: checks.string(link, 'b', path),
  };
  for (const dir of ['a_to_b', 'b_to_a'] as const) {
    if (!(dir in link)) continue;
    const p = `${path}.${dir}`;
    const d = checks.object(link[dir], p, DIRECTION_FIELDS, DIRECTION_OPTIONAL_FIELDS);
    if (!d) continue;
    checks.number(d, 'alpha_us', p, '>=0');
    if ('alpha_under_compute_us' in d) checks.number(d, 'alpha_under_compute_us', p, '>=0');
    if ('switch_us' in d) checks.number(d, 'switch_us', p, '>=0');
    if ('switch_under_compute_us' in d) checks.number(d, 'switch_under_compute_us', p, '>=0');
    if ('spread_us' in d) checks.number(d, 'spread_us', p, '>=0');
    if ('adjacent_us' in d) checks.number(d, 'adjacent_us', p, '>=0');
    checks.number(d, 'GBps', p);
    if ('GBps_under_compute' in d) checks.number(d, 'GBps_under_compute', p);
    if ('bulk_GBps' in d) checks.number(d, 'bulk_GBps', p);
    if ('bulk_from_bytes' in d) checks.integer(d, 'bulk_from_bytes', p, 0);
    if ('request_us' in d) checkRequestUs(d.request_us, `${p}.request_us`, checks);
    if ('batch_us' in d) checks.number(d, 'batch_us', p, '>=0');
    if (('bulk_GBps' in d) !== ('bulk_from_bytes' in d)) checks.add(`${p}: bulk_GBps and bulk_from_bytes go together (got only ${'bulk_GBps' in d ? 'bulk_GBps' : 'bulk_from_bytes'})`);
  }
  checks.integer(link, 'copy_engines', path, 1);
  return out;
}
