/** A readable text table of TraceStats, one line per layer and a mean line. */
import type { LayerStats, TraceStats } from './trace-stats.js';

function f(v: number | null, digits: number): string {
  return v === null ? '-' : v.toFixed(digits);
}

export function formatTraceStats(stats: TraceStats): string {
  const cols = ['layer', 'sink', 'cov50', 'cov90', 'cov99', 'tok90', 'sparse', 'persist', 'entropy', 'last1', 'last4', 'last16'];
  const row = (name: string, l: Omit<LayerStats, 'layer' | 'rows'>): string[] => [
    name,
    f(l.sinkMass, 4),
    f(l.coverBlocks.p50, 1),
    f(l.coverBlocks.p90, 1),
    f(l.coverBlocks.p99, 1),
    f(l.coverTokens.p90, 0),
    f(l.sparsity, 3),
    f(l.persistence, 3),
    f(l.entropyNats, 3),
    f(l.recentMass.last1, 3),
    f(l.recentMass.last4, 3),
    f(l.recentMass.last16, 3),
  ];
  const lines = stats.layers.map((l) => row(String(l.layer), l));
  const L = stats.layers;
  if (L.length > 1) {
    const mean = (g: (l: LayerStats) => number) => L.reduce((s, l) => s + g(l), 0) / L.length;
    const persisted = L.filter((l) => l.persistence !== null);
    const cb = { p50: mean((l) => l.coverBlocks.p50), p90: mean((l) => l.coverBlocks.p90), p99: mean((l) => l.coverBlocks.p99) };
    lines.push(
      row('mean', {
        sinkMass: mean((l) => l.sinkMass),
        coverBlocks: cb,
        coverTokens: { p50: cb.p50 * stats.blockSize, p90: cb.p90 * stats.blockSize, p99: cb.p99 * stats.blockSize },
        sparsity: mean((l) => l.sparsity),
        persistence: persisted.length === 0 ? null : persisted.reduce((s, l) => s + l.persistence!, 0) / persisted.length,
        entropyNats: mean((l) => l.entropyNats),
        recentMass: { last1: mean((l) => l.recentMass.last1), last4: mean((l) => l.recentMass.last4), last16: mean((l) => l.recentMass.last16) },
      }),
    );
  }
  const width = cols.map((c, i) => Math.max(c.length, ...lines.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => c.padStart(width[i]!)).join('  ');
  const top = stats.top.blocks !== null ? `top ${stats.top.blocks} blocks` : `top ${(stats.top.fraction * 100).toFixed(0)}% of blocks`;
  const out = [
    `${stats.source}: ${stats.steps} steps, ${stats.layers.length} layers, ${stats.encoding} encoding, block ${stats.blockSize} tokens` +
      (stats.kvGroups > 1 ? `, ${stats.kvGroups} KV groups (each computed per group, then averaged)` : ''),
    fmt(cols),
    ...lines.map(fmt),
    '',
    'sink = mass on block 0; covNN = blocks to cover NN% of the mass (tok90 in tokens); sparse = share of blocks',
    `< ${stats.sparseThreshold * 100}% of the row max; persist = |A∩B|/|A| of the ${top} step to step; entropy in nats;`,
    'lastN = mass on the last N blocks.',
  ];
  if (stats.remainderSpread) {
    out.push('topk trace: the remainder is spread evenly over the unlisted blocks; the top set is capped at the listed blocks.');
  }
  return out.join('\n');
}
