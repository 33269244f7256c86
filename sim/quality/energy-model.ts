/**
 * Energy of a run's memory traffic (the DPNC energy model, applied to every run): each byte read from
 * or written to a tier costs that tier's energy per byte, and every tier that held KV during the run
 * draws its idle power for the run's duration. Reported as joules per generated token.
 *
 * Values are per tier kind and are ASSUMPTIONS from public figures, to be replaced by measurements:
 * - hbm: 3.9 pJ/bit (HBM2 access energy, O'Connor et al., "Fine-Grained DRAM", MICRO 2017) = 31 pJ/B;
 *   idle 0 (part of the GPU's power, which every policy pays alike);
 * - dram: DDR4/5 ≈ 15 pJ/bit including I/O (same source's DDR comparison) = 120 pJ/B; idle 3 W (assumption:
 *   background + refresh of the DIMMs holding KV);
 * - cxl: DRAM behind a CXL controller, +5 pJ/bit for the link (assumption) = 160 pJ/B; idle 5 W (assumption);
 * - nvme: ~8 W active at ~7 GB/s (Gen4/5 datasheets) ≈ 1.1 nJ/B read, 2 nJ/B write (assumption:
 *   program energy about twice read); idle 5 W (PS0 idle, NVMe datasheets);
 * - hdd: ~7 W active at 0.19 GB/s ≈ 37 nJ/B; idle 5.5 W (Seagate Exos X20 datasheet, idle ≈ 5.4 W).
 * Link (PCIe/CXL/SATA) energy is folded into the tiers' per-byte figures.
 */
export interface TierEnergy {
  read_pJ_per_B: number;
  write_pJ_per_B: number;
  idle_W: number;
}

export const DEFAULT_TIER_ENERGY: Record<string, TierEnergy> = {
  hbm: { read_pJ_per_B: 31, write_pJ_per_B: 31, idle_W: 0 },
  dram: { read_pJ_per_B: 120, write_pJ_per_B: 120, idle_W: 3 },
  cxl: { read_pJ_per_B: 160, write_pJ_per_B: 160, idle_W: 5 },
  nvme: { read_pJ_per_B: 1100, write_pJ_per_B: 2000, idle_W: 5 },
  hdd: { read_pJ_per_B: 37000, write_pJ_per_B: 37000, idle_W: 5.5 },
};

export interface EnergySummary {
  joules_total: number;
  joules_per_token: number;
  /** per tier: dynamic (read + write) and idle joules */
  by_tier: Record<string, { dynamic_J: number; idle_J: number }>;
}

/**
 * @param linkBytes bytes per link direction, key "<link>:<from>-><to>" (the summary's `bytes`)
 * @param tierKinds tier name -> kind
 * @param usedTiers tiers that held KV at some point (peak occupancy > 0)
 */
export function energyOf(
  linkBytes: Record<string, number>,
  tierKinds: Record<string, string>,
  usedTiers: string[],
  seconds: number,
  tokens: number,
  table: Record<string, TierEnergy> = DEFAULT_TIER_ENERGY,
): EnergySummary {
  const by: Record<string, { dynamic_J: number; idle_J: number }> = {};
  const of = (tier: string) => (by[tier] ??= { dynamic_J: 0, idle_J: 0 });
  const e = (tier: string) => table[tierKinds[tier] ?? tier];
  for (const [key, bytes] of Object.entries(linkBytes)) {
    const m = /:(.+)->(.+)$/.exec(key);
    if (!m || !(bytes > 0)) continue;
    const [, from, to] = m;
    if (e(from)) of(from).dynamic_J += (bytes * e(from).read_pJ_per_B) / 1e12;
    if (e(to)) of(to).dynamic_J += (bytes * e(to).write_pJ_per_B) / 1e12;
  }
  for (const t of usedTiers) if (e(t)) of(t).idle_J += e(t).idle_W * seconds;
  const total = Object.values(by).reduce((a, x) => a + x.dynamic_J + x.idle_J, 0);
  return { joules_total: total, joules_per_token: tokens > 0 ? total / tokens : Number.NaN, by_tier: by };
}
