/** An observation's masses as one value per block (unattended blocks 0). */
import { forEachMass, type Observation } from './policy.js';

export function denseObservation(obs: Observation, out: Float64Array): Float64Array {
  out.fill(0, 0, obs.nBlocks);
  forEachMass(obs, (b, m) => {
    out[b] = m;
  });
  return out;
}
