import { FieldChecks } from './field-checks.js';
import type { GpuSpec, LinkSpec, TierSpec } from './profile.js';
import { checkGpu, checkLink, checkTier } from './validate-profile.js';
import { ValidationError } from './validation-error.js';

/**
 * A GPU part (presets/gpus/*.json): the GPU, its own memory (tiers[0] of a machine) and the host
 * link from that memory to host DRAM. Sources keys start with `gpu.`, `hbm.` or `host_link.`.
 */
export interface GpuPreset {
  name: string;
  description: string;
  gpu: GpuSpec;
  hbm: TierSpec;
  host_link: LinkSpec;
  sources: Record<string, string>;
}

const FIELDS = ['name', 'description', 'gpu', 'hbm', 'host_link', 'sources'] as const;
const SOURCE_PREFIXES = ['gpu.', 'hbm.', 'host_link.'] as const;

export function validateGpuPreset(value: unknown, source: string): GpuPreset {
  const checks = new FieldChecks();
  const top = checks.object(value, '', FIELDS);
  if (top) {
    checks.string(top, 'name', '');
    checks.string(top, 'description', '', true);
    if ('gpu' in top) checkGpu(top.gpu, 'gpu', checks);
    const hbmName = 'hbm' in top ? checkTier(top.hbm, 'hbm', checks, true) : undefined;
    const link = 'host_link' in top ? checkLink(top.host_link, 'host_link', checks) : {};
    if (hbmName !== undefined && link.a !== undefined && link.a !== hbmName) {
      checks.add(`host_link.a must be the GPU memory tier "${hbmName}" (got "${link.a}")`);
    }
    checkSourcePrefixes(top, SOURCE_PREFIXES, checks);
  }
  if (checks.problems.length > 0) throw new ValidationError(source, checks.problems);
  return value as GpuPreset;
}

/** Every `sources` key must start with one of `prefixes` (the part's own fields). */
export function checkSourcePrefixes(
  top: Record<string, unknown>,
  prefixes: readonly string[],
  checks: FieldChecks,
): void {
  const sources = checks.stringMap(top, 'sources', '');
  for (const key of Object.keys(sources ?? {})) {
    if (!prefixes.some((p) => key.startsWith(p))) {
      checks.add(`sources["${key}"] must name a field starting with ${prefixes.join(', ')}`);
    }
  }
}
