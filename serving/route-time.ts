/**
 * Transfers between tiers for the serving simulation, on the profile's links (a tree rooted at
 * HBM: pcie hbm-dram, cxl dram-cxl, nvme dram-nvme, ...). A transfer moves its bytes across its
 * whole route at the route's bottleneck bandwidth (source tier read, each link direction,
 * destination tier write) after a fixed latency (source read latency + each link's alpha +
 * destination write latency), so uncontended it takes exactly what sim/topology.ts's flow model
 * gives. Contention is first come, first served: a transfer holds every link direction of its route
 * until it ends, and starts when all of them are free (one copy stream per direction).
 *
 * The serving level keeps this simple FIFO model rather than the fluid flow network: it moves one
 * large transfer per admission and needs to stay fast over hours of simulated time.
 */
import type { HardwareProfile } from '../sim/hardware/profile.js';

export interface TierRoute {
  from: string;
  to: string;
  /** link-direction keys "<link>:<from>-><to>" in order */
  hops: string[];
  alpha_us: number;
  /** bottleneck bandwidth, bytes per microsecond */
  bytesPerUs: number;
}

/** Fewest-hop route from tier `from` to tier `to` over the profile's links. */
export function findRoute(hw: HardwareProfile, from: string, to: string): TierRoute {
  const tier = (name: string) => {
    const t = hw.tiers.find((x) => x.name === name);
    if (!t) throw new Error(`hardware ${hw.name}: unknown tier "${name}" (tiers: ${hw.tiers.map((x) => x.name).join(', ')})`);
    return t;
  };
  const src = tier(from);
  const dst = tier(to);
  type Edge = { node: string; key: string; alpha: number; GBps: number };
  const prev = new Map<string, Edge>();
  const seen = new Set([from]);
  const queue = [from];
  while (queue.length > 0 && !seen.has(to)) {
    const n = queue.shift()!;
    for (const l of hw.links) {
      const dirs: [string, string, typeof l.a_to_b][] = [[l.a, l.b, l.a_to_b], [l.b, l.a, l.b_to_a]];
      for (const [x, y, d] of dirs) {
        if (x !== n || seen.has(y)) continue;
        seen.add(y);
        prev.set(y, { node: x, key: `${l.name}:${x}->${y}`, alpha: d.alpha_us, GBps: d.GBps });
        queue.push(y);
      }
    }
  }
  if (!seen.has(to)) throw new Error(`hardware ${hw.name}: no link route from tier ${from} to ${to}`);
  const hops: string[] = [];
  let alpha = src.read_latency_us + dst.write_latency_us;
  let GBps = Math.min(src.read_GBps, dst.write_GBps);
  for (let n = to; n !== from; ) {
    const e = prev.get(n)!;
    hops.unshift(e.key);
    alpha += e.alpha;
    GBps = Math.min(GBps, e.GBps);
    n = e.node;
  }
  return { from, to, hops, alpha_us: alpha, bytesPerUs: GBps * 1e3 };
}

/** Uncontended time to move `bytes` over `route`, in microseconds. */
export function routeTimeUs(route: TierRoute, bytes: number): number {
  return route.alpha_us + bytes / route.bytesPerUs;
}

/** Link directions as FIFO lanes: when each is free again, and the bytes each has carried. */
export class LinkLanes {
  private readonly freeAt = new Map<string, number>();
  readonly bytes: Record<string, number> = {};
  private readonly routes = new Map<string, TierRoute>();

  constructor(private readonly hw: HardwareProfile) {
    for (const l of hw.links) {
      this.bytes[`${l.name}:${l.a}->${l.b}`] = 0;
      this.bytes[`${l.name}:${l.b}->${l.a}`] = 0;
    }
  }

  route(from: string, to: string): TierRoute {
    const key = `${from}>${to}`;
    let r = this.routes.get(key);
    if (!r) {
      r = findRoute(this.hw, from, to);
      this.routes.set(key, r);
    }
    return r;
  }

  /** Queue a transfer issued at time `now`; returns the time it completes. */
  transfer(from: string, to: string, bytes: number, now: number): number {
    const r = this.route(from, to);
    let start = now;
    for (const h of r.hops) start = Math.max(start, this.freeAt.get(h) ?? 0);
    const end = start + routeTimeUs(r, bytes);
    for (const h of r.hops) {
      this.freeAt.set(h, end);
      this.bytes[h] += bytes;
    }
    return end;
  }
}
