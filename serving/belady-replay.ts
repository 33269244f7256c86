/**
 * ORACLE — not a realizable policy: Belady's MIN on prefix blocks, with future knowledge of the
 * whole trace. The same replay as prefix-replay.ts on one tier of `capacityTokens`, but the victim
 * is the cached block whose next use is farthest in the future (deepest block first among equals,
 * so ancestors outlive descendants), and a new block is not inserted when every cached block will
 * be used sooner than it. It bounds what an online policy could reach; the prefix structure (a hit
 * needs all ancestors) makes it a near-bound rather than a proven optimum.
 */
import { MinHeap } from '../common/min-heap.js';
import type { ServingRequest } from '../traces/requests/request.js';
import { matchedTokens } from './prefix-hits.js';

/** For every (request, block position): index of the next request using that block, or Infinity. */
function nextUses(requests: readonly ServingRequest[]): Float64Array[] {
  const next = new Map<number, number>();
  const out: Float64Array[] = new Array(requests.length);
  for (let r = requests.length - 1; r >= 0; r--) {
    const ids = requests[r].hash_ids;
    const row = new Float64Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      row[i] = next.get(ids[i]) ?? Infinity;
      next.set(ids[i], r);
    }
    out[r] = row;
  }
  return out;
}

export function replayBelady(requests: readonly ServingRequest[], capacityTokens: number, blockTokens: number): { prefix_hit_ratio: number; hit_tokens: number; input_tokens: number } {
  const capBlocks = Math.floor(capacityTokens / blockTokens);
  const future = nextUses(requests);
  /** cached block -> [next use, depth] of its live heap entry */
  const cached = new Map<number, number>();
  const depthOf = new Map<number, number>();
  // max-heap by (next use, depth): keys are negated
  const heap = new MinHeap<number>();
  let input = 0;
  let hit = 0;
  for (let r = 0; r < requests.length; r++) {
    const ids = requests[r].hash_ids;
    let k = 0;
    while (k < ids.length && cached.has(ids[k])) k++;
    hit += matchedTokens(k, requests[r].input_tokens, blockTokens);
    input += requests[r].input_tokens;
    const nu = future[r];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (cached.has(id)) {
        cached.set(id, nu[i]);
        depthOf.set(id, i);
        heap.push(-nu[i], -i, 0, id);
        continue;
      }
      if (nu[i] === Infinity || capBlocks === 0) continue;
      if (cached.size >= capBlocks) {
        // peek the live farthest entry
        for (;;) {
          const v = heap.top();
          if (cached.get(v) === -heap.topA() && depthOf.get(v) === -heap.topB()) break;
          heap.pop();
        }
        const far = -heap.topA();
        const farDepth = -heap.topB();
        if (far < nu[i] || (far === nu[i] && farDepth <= i)) continue; // bypass: it is the farthest
        cached.delete(heap.top());
        heap.pop();
      }
      cached.set(id, nu[i]);
      depthOf.set(id, i);
      heap.push(-nu[i], -i, 0, id);
    }
    if (heap.size > 4 * cached.size + 4096) heap.filter((key, tie, _c, id) => cached.get(id) === -key && depthOf.get(id) === -tie);
  }
  return { prefix_hit_ratio: input > 0 ? hit / input : 0, hit_tokens: hit, input_tokens: input };
}
