/** The built-in policies, registered once. A new policy is one file plus one line here. */
import { fullCache } from './full-cache.js';
import { h2o } from './h2o.js';
import { lruOffload } from './lru-offload.js';
import { registerPolicy } from './registry.js';
import { streamingLlm } from './streaming-llm.js';

let done = false;
export function registerBuiltinPolicies(): void {
  if (done) return;
  done = true;
  for (const def of [fullCache, lruOffload, streamingLlm, h2o]) registerPolicy(def);
}
