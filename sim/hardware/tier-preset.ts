import { FieldChecks } from './field-checks.js';
import { checkSourcePrefixes } from './gpu-preset.js';
import type { LinkSpec, TierSpec } from './profile.js';
import { checkLink, checkTier } from './validate-profile.js';
import { ValidationError } from './validation-error.js';

/**
 * A host tier part (presets/tiers/*.json): the tier and the link that attaches it to host DRAM
 * (a = "dram", b = this tier). The DRAM tier itself has no link: the GPU's host link reaches it.
 * Sources keys start with `tier.` or `link.`.
 */
export interface HostTierPreset {
  name: string;
  description: string;
  tier: TierSpec;
  link?: LinkSpec;
  sources: Record<string, string>;
}

const REQUIRED = ['name', 'description', 'tier', 'sources'] as const;
const OPTIONAL = ['link'] as const;

export function validateTierPreset(value: unknown, source: string): HostTierPreset {
  const checks = new FieldChecks();
  const top = checks.object(value, '', REQUIRED, OPTIONAL);
  if (top) {
    checks.string(top, 'name', '');
    checks.string(top, 'description', '', true);
    const tierName = 'tier' in top ? checkTier(top.tier, 'tier', checks, false) : undefined;
    const kind = (top.tier as { kind?: unknown } | undefined)?.kind;
    if (kind === 'hbm') checks.add('tier.kind must not be "hbm": GPU memory comes from a GPU preset');
    if ('link' in top) {
      const link = checkLink(top.link, 'link', checks);
      if (tierName !== undefined && link.b !== undefined && link.b !== tierName) {
        checks.add(`link.b must be this tier, "${tierName}" (got "${link.b}")`);
      }
    } else if (kind !== undefined && kind !== 'dram' && kind !== 'hbm') {
      checks.add(`link is missing: a ${String(kind)} tier needs the link that attaches it to DRAM`);
    }
    checkSourcePrefixes(top, ['tier.', 'link.'], checks);
  }
  if (checks.problems.length > 0) throw new ValidationError(source, checks.problems);
  return value as HostTierPreset;
}
