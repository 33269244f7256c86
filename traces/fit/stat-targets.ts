/**
 * The statistics a generator fit matches, taken per layer from `computeTraceStats`, and the
 * distance between two sets of them. Each statistic has a scale: a difference of one scale costs
 * 1 (squared), so the loss is a sum of squared, scale-normalised residuals over layers.
 */
import type { LayerStats, TraceStats } from '../trace-stats.js';

export interface StatDef {
  key: string;
  label: string;
  get: (l: LayerStats) => number;
  /** 'abs': (gen - target) / scale; 'log': ln((gen + 1) / (target + 1)) / scale */
  kind: 'abs' | 'log';
  scale: number;
}

export const FIT_STATS: readonly StatDef[] = [
  { key: 'sink', label: 'mass on block 0', get: (l) => l.sinkMass, kind: 'abs', scale: 0.02 },
  { key: 'cover50', label: 'blocks for 50% of mass', get: (l) => l.coverBlocks.p50, kind: 'log', scale: 0.15 },
  { key: 'cover90', label: 'blocks for 90% of mass', get: (l) => l.coverBlocks.p90, kind: 'log', scale: 0.15 },
  { key: 'cover99', label: 'blocks for 99% of mass', get: (l) => l.coverBlocks.p99, kind: 'log', scale: 0.3 },
  { key: 'sparsity', label: 'blocks < 1% of row max', get: (l) => l.sparsity, kind: 'abs', scale: 0.02 },
  { key: 'persistence', label: 'top-10% set kept step to step', get: (l) => l.persistence ?? 0, kind: 'abs', scale: 0.04 },
  { key: 'entropy', label: 'entropy (nats)', get: (l) => l.entropyNats, kind: 'abs', scale: 0.2 },
  { key: 'last1', label: 'mass on the last block', get: (l) => l.recentMass.last1, kind: 'abs', scale: 0.03 },
  { key: 'last4', label: 'mass on the last 4 blocks', get: (l) => l.recentMass.last4, kind: 'abs', scale: 0.03 },
  { key: 'last16', label: 'mass on the last 16 blocks', get: (l) => l.recentMass.last16, kind: 'abs', scale: 0.04 },
];

/** target[layer][stat] in FIT_STATS order. */
export type StatTable = number[][];

export function statTable(stats: TraceStats): StatTable {
  return stats.layers.map((l) => FIT_STATS.map((d) => d.get(l)));
}

export function residual(d: StatDef, gen: number, target: number): number {
  return d.kind === 'log' ? Math.log((gen + 1) / (target + 1)) / d.scale : (gen - target) / d.scale;
}

/** Sum over layers and statistics of squared scaled residuals (Infinity when the layer counts differ). */
export function statLoss(gen: StatTable, target: StatTable): number {
  if (gen.length !== target.length) return Infinity;
  let s = 0;
  for (let l = 0; l < target.length; l++) {
    for (let i = 0; i < FIT_STATS.length; i++) {
      const r = residual(FIT_STATS[i]!, gen[l]![i]!, target[l]![i]!);
      s += r * r;
    }
  }
  return s;
}

/** Mean over layers of each statistic. */
export function layerMeans(t: StatTable): number[] {
  return FIT_STATS.map((_, i) => t.reduce((s, row) => s + row[i]!, 0) / Math.max(1, t.length));
}
