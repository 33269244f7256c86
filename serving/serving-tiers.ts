/**
 * Which tiers the serving-level prefix cache uses and how many tokens each holds.
 *
 * - Tiers: the profile's tiers of kind hbm, dram, cxl, nvme (in the profile's order, HBM first),
 *   or the ones named in `tiers`. Each must be reachable from HBM over the profile's links.
 * - Sizes from the profile: HBM holds (capacity - reserved - model weights) / KV bytes per token;
 *   every other tier capacity / KV bytes per token (FP16 KV).
 * - `tierTokens` replaces the size of the tiers it names.
 * - `capacityTokens` caps the total: tiers are filled from the top (HBM first) and the lowest tier
 *   takes whatever is left, even beyond its own size (Infinity makes the lowest tier unbounded).
 */
import { GiB, type HardwareProfile, type TierKind } from '../sim/hardware/profile.js';
import { kvBytesPerToken } from '../sim/models/kv-bytes-per-token.js';
import type { ModelSpec } from '../sim/models/model.js';
import type { CacheTier } from './tiered-prefix-cache.js';

export const DEFAULT_SERVING_TIER_KINDS: readonly TierKind[] = ['hbm', 'dram', 'cxl', 'nvme'];

export interface ServingTierOptions {
  tiers?: readonly string[];
  tierTokens?: Readonly<Record<string, number>>;
  capacityTokens?: number;
}

export interface ServingTier extends CacheTier {
  kind: TierKind;
  /** size the profile alone gives (before flags) */
  profileTokens: number;
}

export function modelWeightBytes(model: ModelSpec): number {
  return model.layers * model.weight_bytes_per_layer + model.other_weight_bytes;
}

export function resolveServingTiers(hw: HardwareProfile, model: ModelSpec, opts: ServingTierOptions = {}): ServingTier[] {
  const perToken = kvBytesPerToken(model, 16);
  const byName = new Map(hw.tiers.map((t) => [t.name, t]));
  const names = opts.tiers ?? hw.tiers.filter((t) => DEFAULT_SERVING_TIER_KINDS.includes(t.kind)).map((t) => t.name);
  if (names.length === 0) throw new Error(`hardware ${hw.name}: no tiers for the prefix cache`);
  const seen = new Set<string>();
  const tiers: ServingTier[] = names.map((name, i) => {
    const spec = byName.get(name);
    if (!spec) throw new Error(`tiers: hardware ${hw.name} has no tier "${name}" (tiers: ${hw.tiers.map((t) => t.name).join(', ')})`);
    if (seen.has(name)) throw new Error(`tiers: "${name}" is listed twice`);
    seen.add(name);
    if ((i === 0) !== (spec.kind === 'hbm')) throw new Error(`tiers: the first tier must be the GPU's HBM and only it (got "${name}" of kind ${spec.kind} at position ${i + 1})`);
    let bytes = spec.capacity_GiB * GiB;
    if (spec.kind === 'hbm') {
      bytes -= hw.gpu.reserved_GiB * GiB + modelWeightBytes(model);
      if (bytes < perToken) {
        throw new Error(
          `model ${model.name} (${(modelWeightBytes(model) / GiB).toFixed(1)} GiB of weights) leaves no room for KV in ` +
            `${hw.name}'s HBM (${spec.capacity_GiB} GiB, ${hw.gpu.reserved_GiB} GiB reserved)`,
        );
      }
    }
    const tokens = Math.floor(bytes / perToken);
    return { name, kind: spec.kind, capacityTokens: tokens, profileTokens: tokens };
  });
  checkReachable(hw, tiers);
  for (const [name, tokens] of Object.entries(opts.tierTokens ?? {})) {
    const t = tiers.find((x) => x.name === name);
    if (!t) throw new Error(`tier-tokens: "${name}" is not a tier of the prefix cache (tiers: ${tiers.map((x) => x.name).join(', ')})`);
    if (!(tokens >= 0)) throw new Error(`tier-tokens: ${name} must be >= 0 tokens (got ${tokens})`);
    t.capacityTokens = tokens;
  }
  if (opts.capacityTokens !== undefined) {
    const total = opts.capacityTokens;
    if (!(total > 0)) throw new Error(`capacity-tokens must be > 0 (got ${total})`);
    let left = total;
    tiers.forEach((t, i) => {
      t.capacityTokens = i === tiers.length - 1 ? left : Math.min(t.capacityTokens, left);
      left -= t.capacityTokens;
    });
  }
  return tiers;
}

function checkReachable(hw: HardwareProfile, tiers: readonly ServingTier[]): void {
  const reached = new Set([tiers[0].name]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const l of hw.links) {
      for (const [x, y] of [[l.a, l.b], [l.b, l.a]]) {
        if (reached.has(x) && !reached.has(y)) {
          reached.add(y);
          grew = true;
        }
      }
    }
  }
  for (const t of tiers) if (!reached.has(t.name)) throw new Error(`tiers: ${hw.name} has no link route from ${tiers[0].name} to ${t.name}`);
}

/** Parse "hbm=100000,dram=2e6,nvme=unbounded" (tokens per tier). */
export function parseTierTokens(spec: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of spec.split(',')) {
    const m = /^\s*([\w-]+)\s*=\s*(.+?)\s*$/.exec(part);
    if (!m) throw new Error(`tier-tokens: expected NAME=TOKENS[,NAME=TOKENS...], got "${part}"`);
    out[m[1]] = parseTokenCount(m[2], `tier-tokens ${m[1]}`);
  }
  return out;
}

/** A token count: an integer, a float like 3e6, a suffixed number (500k, 3M, 1G), or "unbounded". */
export function parseTokenCount(s: string, what: string): number {
  const t = s.trim().toLowerCase();
  if (t === 'unbounded' || t === 'inf' || t === 'infinity') return Infinity;
  const m = /^(\d+(?:\.\d+)?(?:e\d+)?)([kmg]?)$/.exec(t);
  if (!m) throw new Error(`${what}: expected a token count (e.g. 3000000, 3e6, 3M or unbounded), got "${s}"`);
  const mult = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[m[2]]!;
  const n = Number(m[1]) * mult;
  if (!Number.isFinite(n) || n < 0) throw new Error(`${what}: expected a token count >= 0, got "${s}"`);
  if (!Number.isInteger(n)) throw new Error(`${what}: expected a whole number of tokens, got "${s}" (= ${n})`);
  return n;
}
