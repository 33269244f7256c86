/**
 * Energy of a run, reported as joules per generated token (`energy_j_per_token` in sweep results):
 *
 * - GPU: busy power x the compute stream's kernel time + idle power x the rest of the run (the GPU
 *   waits for transfers or sits idle between kernels). HBM traffic is inside the GPU's power.
 * - Host memory tiers (DRAM, CXL): energy per byte read or written (dynamic) + background power per
 *   GiB of KV the tier held at its peak, for the run's duration.
 * - Storage tiers (SSD, HDD) that held KV or moved bytes: active power while transferring (bytes over
 *   the tier's read or write GB/s, at most the run's duration) + idle power for the rest.
 * - Links (PCIe, CXL, NVMe, SATA): energy per byte carried.
 *
 * The constants are data (energy-constants.json), each with its source: measured on the lent H100
 * (GPU busy and idle power), a datasheet, a paper, or marked as an assumption. The GPU is looked up
 * by its name (the first entry whose `match` it contains); a GPU with no entry gives NaN joules and
 * says so in `note`.
 */
import constants from './energy-constants.json' with { type: 'json' };
import { GiB, type HardwareProfile } from '../hardware/profile.js';

export interface GpuPower {
  match: string;
  busy_W: number;
  idle_W: number;
  tdp_W: number;
}

export interface EnergyConstants {
  gpus: GpuPower[];
  memory: Record<string, { read_pJ_per_B: number; write_pJ_per_B: number; idle_W_per_GiB: number }>;
  storage: Record<string, { active_W: number; idle_W: number }>;
  /** pJ per byte by link name; `default` for other names */
  links: Record<string, number | Record<string, string>>;
}

export const ENERGY_CONSTANTS: EnergyConstants = constants as EnergyConstants;

export interface EnergyInput {
  hardware: HardwareProfile;
  /** bytes per link direction, key "<link>:<from>-><to>" (the summary's `bytes`) */
  linkBytes: Record<string, number>;
  /** peak bytes of KV per tier name */
  peakBytes: Record<string, number>;
  /** the run's duration and the compute stream's kernel time, seconds */
  seconds: number;
  gpuBusySeconds: number;
  tokens: number;
}

export interface EnergySummary {
  joules_total: number;
  joules_per_token: number;
  gpu: { model: string | null; busy_J: number; idle_J: number };
  /** per host tier: active (dynamic bytes, or active power while transferring) and idle joules */
  by_tier: Record<string, { active_J: number; idle_J: number }>;
  /** per link name: joules of the bytes it carried */
  links_J: Record<string, number>;
  /** why a term is missing (NaN) */
  note?: string;
}

export function gpuPowerOf(gpuName: string, table: EnergyConstants = ENERGY_CONSTANTS): GpuPower | undefined {
  const name = gpuName.toLowerCase();
  return table.gpus.find((g) => name.includes(g.match.toLowerCase()));
}

export function energyOf(input: EnergyInput, table: EnergyConstants = ENERGY_CONSTANTS): EnergySummary {
  const { hardware, seconds } = input;
  const kindOf = new Map(hardware.tiers.map((t) => [t.name, t]));
  const byTier: Record<string, { active_J: number; idle_J: number }> = {};
  const linksJ: Record<string, number> = {};
  const activeS: Record<string, number> = {};
  const tierOf = (name: string) => (byTier[name] ??= { active_J: 0, idle_J: 0 });
  const linkPJ = (name: string) => {
    const v = table.links[name] ?? table.links.default;
    return typeof v === 'number' ? v : 0;
  };
  const touch = (tierName: string, bytes: number, write: boolean) => {
    const t = kindOf.get(tierName);
    if (!t || t.kind === 'hbm') return;
    const mem = table.memory[t.kind];
    if (mem) tierOf(tierName).active_J += (bytes * (write ? mem.write_pJ_per_B : mem.read_pJ_per_B)) / 1e12;
    else if (table.storage[t.kind]) activeS[tierName] = (activeS[tierName] ?? 0) + bytes / ((write ? t.write_GBps : t.read_GBps) * 1e9);
  };
  for (const [key, bytes] of Object.entries(input.linkBytes)) {
    const m = /^(.+):(.+)->(.+)$/.exec(key);
    if (!m || !(bytes > 0)) continue;
    const [, link, from, to] = m;
    linksJ[link] = (linksJ[link] ?? 0) + (bytes * linkPJ(link)) / 1e12;
    touch(from, bytes, false);
    touch(to, bytes, true);
  }
  for (const t of hardware.tiers) {
    if (t.kind === 'hbm') continue;
    const peak = input.peakBytes[t.name] ?? 0;
    const mem = table.memory[t.kind];
    if (mem) {
      if (peak > 0) tierOf(t.name).idle_J += mem.idle_W_per_GiB * (peak / GiB) * seconds;
      continue;
    }
    const disk = table.storage[t.kind];
    if (!disk || (peak <= 0 && !(activeS[t.name] > 0))) continue;
    const active = Math.min(seconds, activeS[t.name] ?? 0);
    tierOf(t.name).active_J += disk.active_W * active;
    tierOf(t.name).idle_J += disk.idle_W * (seconds - active);
  }
  const power = gpuPowerOf(hardware.gpu.name, table);
  const busy = Math.min(seconds, Math.max(0, input.gpuBusySeconds));
  const gpu = power
    ? { model: power.match, busy_J: power.busy_W * busy, idle_J: power.idle_W * (seconds - busy) }
    : { model: null, busy_J: Number.NaN, idle_J: Number.NaN };
  let total = gpu.busy_J + gpu.idle_J;
  for (const x of Object.values(byTier)) total += x.active_J + x.idle_J;
  for (const j of Object.values(linksJ)) total += j;
  const out: EnergySummary = { joules_total: total, joules_per_token: input.tokens > 0 ? total / input.tokens : Number.NaN, gpu, by_tier: byTier, links_J: linksJ };
  if (!power) out.note = `no GPU power constants for "${hardware.gpu.name}" (known: ${table.gpus.map((g) => g.match).join(', ')}; sim/quality/energy-constants.json)`;
  return out;
}
