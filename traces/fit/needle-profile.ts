/**
 * Where a needle trace's retrieval happens: per layer, the mass (averaged over KV groups) on the
 * needle's blocks during the first `answerSteps` decode steps (the passkey's digits), read from
 * the capture's header (`provenance.text.needle_tokens`).
 */
import { openTrace } from '../trace-reader.js';

export interface NeedleProfile {
  depth: number;
  blocks: number[];
  answerSteps: number;
  /** per layer: mean mass on the needle blocks over the answer steps */
  massByLayer: number[];
}

export function needleProfile(path: string, answerSteps = 5): NeedleProfile {
  const r = openTrace(path);
  try {
    const h = r.header as unknown as { provenance: { text?: { needle_tokens?: [number, number]; depth?: number } } };
    const span = h.provenance.text?.needle_tokens;
    if (!span) throw new Error(`${path}: not a needle capture (no provenance.text.needle_tokens)`);
    const B = r.header.block_size;
    const blocks: number[] = [];
    for (let b = Math.floor(span[0] / B); b <= Math.floor((span[1] - 1) / B); b++) blocks.push(b);
    const G = r.header.kv_groups;
    const mass = new Array<number>(r.header.layers).fill(0);
    let steps = 0;
    for (const step of r) {
      if (steps >= answerSteps) break;
      step.layers.forEach((row, i) => {
        let m = 0;
        for (let k = 0; k < row.mass.length; k++) if (blocks.includes(row.idx === null ? k : row.idx[k]!)) m += row.mass[k]!;
        mass[Math.floor(i / G)]! += m / G;
      });
      steps++;
    }
    return { depth: h.provenance.text?.depth ?? 0.5, blocks, answerSteps: steps, massByLayer: mass.map((m) => m / Math.max(1, steps)) };
  } finally {
    r.close();
  }
}
