import type { GpuPreset } from './gpu-preset.js';
import type { MachineEntry } from './machine-list.js';
import { PROFILE_SCHEMA } from './validate-profile.js';
import type { HardwareProfile } from './profile.js';
import type { HostTierPreset } from './tier-preset.js';

/**
 * Build a machine's profile from its parts: tiers = [gpu memory, ...host tiers in the order given],
 * links = [gpu host link, ...each host tier's link]. Each part's sources are re-keyed to the field
 * paths of the composed profile (`hbm.x` -> `tiers[0].x`, `link.x` -> `links[j].x`). The result is a
 * fresh object (the parts are copied), not yet validated.
 */
export function composeMachine(
  name: string,
  entry: MachineEntry,
  gpu: GpuPreset,
  hostTiers: readonly HostTierPreset[],
): HardwareProfile {
  const sources: Record<string, string> = {};
  const rekey = (from: Record<string, string>, prefix: string, to: string): void => {
    for (const [key, text] of Object.entries(from)) {
      if (key.startsWith(prefix)) sources[to + key.slice(prefix.length)] = text;
    }
  };
  rekey(gpu.sources, 'gpu.', 'gpu.');
  rekey(gpu.sources, 'hbm.', 'tiers[0].');
  rekey(gpu.sources, 'host_link.', 'links[0].');

  const tiers = [structuredClone(gpu.hbm)];
  const links = [structuredClone(gpu.host_link)];
  for (const part of hostTiers) {
    rekey(part.sources, 'tier.', `tiers[${tiers.length}].`);
    tiers.push(structuredClone(part.tier));
    if (part.link) {
      rekey(part.sources, 'link.', `links[${links.length}].`);
      links.push(structuredClone(part.link));
    }
  }
  return {
    schema: PROFILE_SCHEMA,
    name,
    description: entry.description,
    gpu: structuredClone(gpu.gpu),
    tiers,
    links,
    sources,
  };
}
