/** An observation's masses as one value per block (unattended blocks 0). */
import { forEachMass, type GroupAttention, type Observation } from './policy.js';

export function denseObservation(obs: Observation, out: Float64Array): Float64Array {
  out.fill(0, 0, obs.nBlocks);
  forEachMass(obs, (b, m) => {
    out[b] = m;
  });
  return out;
}

/** One KV group's masses as one value per block (unattended blocks 0). */
export function denseGroupObservation(obs: Observation, ga: GroupAttention, out: Float64Array): Float64Array {
  const { attended, nBlocks } = obs;
  if (ga.idx === null) {
    for (let b = 0; b < nBlocks; b++) out[b] = attended[b] ? ga.mass[b] : 0;
    return out;
  }
  for (let b = 0; b < nBlocks; b++) out[b] = attended[b] ? ga.uniform : 0;
  for (let i = 0; i < ga.idx.length; i++) if (attended[ga.idx[i]]) out[ga.idx[i]] = ga.mass[i];
  return out;
}
