/**
 * Entropy of an observed attention row: H = −Σ p̂_b ln p̂_b over the attended blocks, p̂ the masses
 * normalized to their total (nats). ln(nBlocks) for uniform attention, 0 when one block holds it all.
 * exp(H) is the row's effective number of attended blocks.
 */
import type { GroupAttention } from './policy.js';

/** Entropy of one KV group's attention over the blocks with attended[b] = 1 (listed masses, unlisted blocks at `uniform`). */
export function groupEntropy(g: GroupAttention, attended: Uint8Array, nBlocks: number): number {
  let total = 0;
  let plogp = 0;
  const add = (p: number) => {
    if (p > 0) {
      total += p;
      plogp += p * Math.log(p);
    }
  };
  if (g.idx === null) {
    for (let b = 0; b < nBlocks; b++) if (attended[b]) add(g.mass[b]);
  } else {
    let listedAttended = 0;
    for (let i = 0; i < g.idx.length; i++) {
      if (attended[g.idx[i]]) {
        add(g.mass[i]);
        listedAttended++;
      }
    }
    let attendedCount = 0;
    for (let b = 0; b < nBlocks; b++) attendedCount += attended[b];
    const unlisted = attendedCount - listedAttended;
    if (unlisted > 0 && g.uniform > 0) {
      total += unlisted * g.uniform;
      plogp += unlisted * g.uniform * Math.log(g.uniform);
    }
  }
  // Σ p̂ ln p̂ with p̂ = p / T is (Σ p ln p) / T − ln T
  return total > 0 ? Math.log(total) - plogp / total : 0;
}
