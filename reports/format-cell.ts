/**
 * Numbers as a person reads them in a table: integers grouped by thousands, other values with
 * three significant digits (more before the point when needed), tiny or huge ones in exponent form.
 * Locale-independent, so a report is the same on every machine.
 */
export function formatNumber(x: number): string {
  if (Number.isNaN(x)) return '—';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (Number.isInteger(x) && a < 1e15) return groupThousands(x.toFixed(0));
  if (a >= 1e15 || a < 1e-3) return x.toExponential(2).replace('e+', 'e');
  if (a >= 1000) return groupThousands(x.toFixed(0));
  const digits = a >= 100 ? 1 : a >= 1 ? 2 : 2 - Math.floor(Math.log10(a));
  return x.toFixed(digits);
}

function groupThousands(s: string): string {
  const neg = s.startsWith('-');
  const d = neg ? s.slice(1) : s;
  const grouped = d.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return neg ? `−${grouped}` : grouped;
}

export function formatCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  return typeof v === 'number' ? formatNumber(v) : v;
}
