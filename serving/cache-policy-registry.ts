/**
 * The one registry of prefix-cache policies (`kvtier serve --cache NAME`). Each policy is one file
 * exporting a CachePolicyDefinition and one line below. A duplicate name is rejected unless
 * `override` is set. The registry and option code are common/'s, shared with policies/registry.ts.
 */
import { resolveOptions } from '../common/options.js';
import { Registry } from '../common/registry.js';
import { arcPolicy } from './arc-policy.js';
import type { CachePolicy, CachePolicyDefinition } from './cache-policy.js';
import { lfuPolicy } from './lfu-policy.js';
import { lruPolicy } from './lru-policy.js';
import { s3fifoPolicy } from './s3fifo-policy.js';

const registry = new Registry<CachePolicyDefinition<any>>('cache policy');

export function registerCachePolicy(def: CachePolicyDefinition<any>, opts: { override?: boolean } = {}): void {
  registry.register(def, opts);
}

export function listCachePolicies(): CachePolicyDefinition<any>[] {
  return registry.list();
}

export function getCachePolicy(name: string): CachePolicyDefinition<any> {
  return registry.get(name);
}

/** Raw option values (CLI strings, JSON values) checked and typed against the policy's options. */
export function resolveCachePolicyOptions(def: CachePolicyDefinition<any>, raw: Record<string, unknown> = {}): Record<string, unknown> {
  return resolveOptions('cache policy', def, raw);
}

/** A policy instance for one tier of `capacityBlocks`, its options resolved from `raw`. */
export function createCachePolicy(name: string, capacityBlocks: number, raw: Record<string, unknown> = {}): CachePolicy {
  const def = getCachePolicy(name);
  return def.create(capacityBlocks, resolveCachePolicyOptions(def, raw));
}

registerCachePolicy(lruPolicy);
registerCachePolicy(lfuPolicy);
registerCachePolicy(arcPolicy);
registerCachePolicy(s3fifoPolicy);
