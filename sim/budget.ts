/**
 * The HBM budget for the KV cache: "20%" or 0.2 (a share of the FP16 KV at the trace's final
 * context, all layers) or an absolute size such as "4GiB", "512MiB", "3.5GB" or a byte count.
 */
const UNITS: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3, TIB: 1024 ** 4 };

export function parseBudget(value: string | number, fullKvBytes: number): number {
  const bad = () =>
    new Error(`--hbm-budget: cannot read ${JSON.stringify(value)} (use a share such as 20% or 0.2, or a size such as 4GiB, 512MiB, 3.5GB)`);
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) throw bad();
    return value <= 1 ? value * fullKvBytes : value;
  }
  const s = value.trim();
  const pct = /^(\d+(?:\.\d+)?)\s*%$/.exec(s);
  if (pct) {
    const p = Number(pct[1]);
    if (!(p > 0 && p <= 100)) throw new Error(`--hbm-budget: ${s} must be in (0%, 100%]`);
    return (p / 100) * fullKvBytes;
  }
  const size = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?$/i.exec(s);
  if (!size) throw bad();
  const n = Number(size[1]);
  if (!(n > 0)) throw bad();
  if (!size[2]) return n <= 1 ? n * fullKvBytes : n;
  return n * UNITS[size[2].toUpperCase()];
}
