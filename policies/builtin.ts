/** The built-in policies, registered once. A new policy is one file plus one line here. */
import { fullCache } from './full-cache.js';
import { h2o } from './h2o.js';
import { lruOffload } from './lru-offload.js';
import { oracle } from './oracle.js';
import { synapseVm } from './synapsevm.js';
import { snapKv } from './snapkv.js';
import { pyramidKv } from './pyramidkv.js';
import { quest } from './quest.js';
import { kivi } from './kivi.js';
import { infiniGen } from './infinigen.js';
import { fifo } from './fifo.js';
import { lru } from './lru.js';
import { lfu } from './lfu.js';
import { arc } from './arc.js';
import { flexgenStatic } from './flexgen-static.js';
import { smartKv } from './smartkv.js';
import { uniformInt8 } from './uniform-int8.js';
import { dpnc } from './dpnc.js';
import { slep } from './slep.js';
import { ntransformer } from './ntransformer.js';
import { findPolicy, registerPolicy } from './registry.js';
import { streamingLlm } from './streaming-llm.js';

let done = false;
export function registerBuiltinPolicies(): void {
  if (done) return;
  done = true;
  const defs = [
    fullCache,
    lruOffload,
    streamingLlm,
    h2o,
    oracle,
    synapseVm,
    snapKv,
    pyramidKv,
    quest,
    kivi,
    infiniGen,
    fifo,
    lru,
    lfu,
    arc,
    flexgenStatic,
    smartKv,
    uniformInt8,
    dpnc,
    slep,
    ntransformer,
  ];
  // (one registered on its own before, as `kvtier run` registers the policy it runs, is left as it is)
  for (const def of defs) if (findPolicy(def.name) !== def) registerPolicy(def);
}
