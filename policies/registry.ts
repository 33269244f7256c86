/**
 * The one policy registry: each policy file exports a PolicyDefinition and is registered here once
 * (the built-in list is in builtin.ts). A duplicate name is rejected unless `override` is set. The
 * registry and option code are common/'s, shared with the prefix-cache policies of serving/.
 */
import { resolveOptions as resolveTyped } from '../common/options.js';
import { Registry } from '../common/registry.js';
import type { Policy, PolicyDefinition, PolicySetup } from './policy.js';

const registry = new Registry<PolicyDefinition<any>>('policy');

export function registerPolicy(def: PolicyDefinition<any>, opts: { override?: boolean } = {}): void {
  registry.register(def, opts);
}

export function listPolicies(): PolicyDefinition<any>[] {
  return registry.list();
}

export function getPolicy(name: string): PolicyDefinition<any> {
  return registry.get(name);
}

/** The policy registered as `name`, or undefined. */
export function findPolicy(name: string): PolicyDefinition<any> | undefined {
  return registry.find(name);
}

/** True when `name` is a registered policy that is the quality reference (definition.full): it runs at 100% of the KV. */
export function isFullPolicy(name: string): boolean {
  return registry.find(name)?.full === true;
}

/**
 * Resolve raw option values (strings from the CLI or JSON values from a sweep file) against the
 * policy's typed option list: unknown names, wrong types and out-of-range values are errors.
 */
export function resolveOptions(def: PolicyDefinition<any>, raw: Record<string, unknown> = {}): Record<string, unknown> {
  return resolveTyped('policy', def, raw);
}

export function createPolicy(name: string, raw: Record<string, unknown>, setup: PolicySetup): { policy: Policy; options: Record<string, unknown> } {
  const def = getPolicy(name);
  const options = resolveOptions(def, raw);
  return { policy: def.create(options, setup), options };
}
