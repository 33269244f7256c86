/** Units for report text and charts: binary byte units, percentages of a budget. */
export const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;
export type ByteUnit = (typeof BYTE_UNITS)[number];

/** The largest binary unit in which `maxBytes` is still >= 1. */
export function byteUnitFor(maxBytes: number): { unit: ByteUnit; divisor: number } {
  let i = 0;
  while (i < BYTE_UNITS.length - 1 && Math.abs(maxBytes) >= 1024 ** (i + 1)) i++;
  return { unit: BYTE_UNITS[i]!, divisor: 1024 ** i };
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—';
  const { unit, divisor } = byteUnitFor(bytes);
  const v = bytes / divisor;
  return `${unit === 'B' ? v.toFixed(0) : v.toFixed(Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2)} ${unit}`;
}

/** 0.125 -> "12.5%", 0.5 -> "50%": as few decimals as the value needs, at most two. */
export function formatPercent(fraction: number): string {
  if (!Number.isFinite(fraction)) return '—';
  const p = fraction * 100;
  for (const d of [0, 1, 2]) {
    const s = p.toFixed(d);
    if (Math.abs(Number(s) - p) < 1e-9) return `${s}%`;
  }
  return `${p.toFixed(2)}%`;
}
