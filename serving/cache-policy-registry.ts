/**
 * The one registry of prefix-cache policies (`kvtier serve --cache NAME`). Each policy is one file
 * exporting a CachePolicyDefinition and one line below. A duplicate name is rejected unless
 * `override` is set.
 */
import { arcPolicy } from './arc-policy.js';
import type { CachePolicyDefinition } from './cache-policy.js';
import { lfuPolicy } from './lfu-policy.js';
import { lruPolicy } from './lru-policy.js';
import { s3fifoPolicy } from './s3fifo-policy.js';

const registry = new Map<string, CachePolicyDefinition>();

export function registerCachePolicy(def: CachePolicyDefinition, opts: { override?: boolean } = {}): void {
  if (registry.has(def.name) && !opts.override) {
    throw new Error(`cache policy "${def.name}" is already registered (pass { override: true } to replace it)`);
  }
  registry.set(def.name, def);
}

export function listCachePolicies(): CachePolicyDefinition[] {
  return [...registry.values()];
}

export function getCachePolicy(name: string): CachePolicyDefinition {
  const def = registry.get(name);
  if (!def) throw new Error(`unknown cache policy "${name}" (valid: ${[...registry.keys()].join(', ')})`);
  return def;
}

registerCachePolicy(lruPolicy);
registerCachePolicy(lfuPolicy);
registerCachePolicy(arcPolicy);
registerCachePolicy(s3fifoPolicy);
