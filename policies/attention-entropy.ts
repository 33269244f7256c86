/**
 * Entropy of an observed attention row: H = −Σ p̂_b ln p̂_b over the attended blocks, p̂ the masses
 * normalized to their total (nats). ln(nBlocks) for uniform attention, 0 when one block holds it all.
 * exp(H) is the row's effective number of attended blocks.
 */
import type { GroupAttention } from './policy.js';

/**
 * Entropy of one KV group's attention over the blocks with attended[b] = 1 (listed masses, unlisted
 * blocks at `uniform`). `attendedCount`, when given, is the number of 1s in attended[0, nBlocks).
 */
export function groupEntropy(g: GroupAttention, attended: Uint8Array, nBlocks: number, attendedCount?: number): number {
  let total = 0;
  let plogp = 0;
  const { idx, mass } = g;
  if (idx === null) {
    for (let b = 0; b < nBlocks; b++) {
      const p = mass[b];
      if (attended[b] && p > 0) {
        total += p;
        plogp += p * Math.log(p);
      }
    }
  } else {
    let listedAttended = 0;
    for (let i = 0; i < idx.length; i++) {
      if (attended[idx[i]]) {
        const p = mass[i];
        if (p > 0) {
          total += p;
          plogp += p * Math.log(p);
        }
        listedAttended++;
      }
    }
    let count = attendedCount ?? -1;
    if (count < 0) {
      count = 0;
      for (let b = 0; b < nBlocks; b++) count += attended[b];
    }
    const unlisted = count - listedAttended;
    if (unlisted > 0 && g.uniform > 0) {
      total += unlisted * g.uniform;
      plogp += unlisted * g.uniform * Math.log(g.uniform);
    }
  }
  // Σ p̂ ln p̂ with p̂ = p / T is (Σ p ln p) / T − ln T
  return total > 0 ? Math.log(total) - plogp / total : 0;
}
