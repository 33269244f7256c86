/**
 * Several Vega SVGs inlined in one HTML page all number their clip paths from 1 (`id="clip1"`),
 * so the second chart would clip with the first chart's rectangle. Prefix every id, and every
 * reference to one, with a per-chart scope.
 */
export function scopeSvgIds(svg: string, scope: string): string {
  const ids = new Set<string>();
  for (const m of svg.matchAll(/\sid="([^"]+)"/g)) ids.add(m[1]!);
  if (ids.size === 0) return svg;
  const re = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const alt = [...ids].map(re).join('|');
  return svg
    .replace(new RegExp(`(\\sid=")(${alt})(")`, 'g'), `$1${scope}-$2$3`)
    .replace(new RegExp(`url\\(#(${alt})\\)`, 'g'), `url(#${scope}-$1)`)
    .replace(new RegExp(`(href=")#(${alt})(")`, 'g'), `$1#${scope}-$2$3`);
}
