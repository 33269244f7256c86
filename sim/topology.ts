/**
 * Builds the flow network of a hardware profile: one resource per link direction (with the link's
 * copy engines as slots) and one read and one write port per tier, and finds routes between tiers.
 */
import type { Engine } from './engine.js';
import { FlowNetwork, type Resource } from './flow-network.js';
import type { HardwareProfile, LinkDirection, TierSpec } from './hardware/profile.js';

type Hop = { to: string; key: string; alpha_us: number; busy_us: number; switch_us: number; switch_busy_us: number; spread_us: number; adjacent_us: number; busy_GBps: number; GBps: number; bulk_GBps: number; bulk_from_bytes: number; request_us: readonly (readonly [number, number])[] | null; batch_us: number };

export interface Route {
  from: string;
  to: string;
  /** link-direction keys "<link>:<from>-><to>" in order */
  hops: string[];
  resources: Resource[];
  alpha_us: number;
  /** the same with each hop's alpha_under_compute_us (where given): a copy started while a kernel runs */
  alpha_under_compute_us: number;
  /** the hops' switch_us: added where the memory stream's previous copy went the other way */
  switch_us: number;
  /** the same with each hop's switch_under_compute_us: for a copy that starts while a kernel runs */
  switch_under_compute_us: number;
  /** the hops' spread_us: per doubling of the host-slot distance between a batch's copies beyond SPREAD_FROM_BLOCKS (sim/host-spread.ts) */
  spread_us: number;
  /** the hops' adjacent_us: taken off per copy whose host slot follows the previous copy's (a block below full width) */
  adjacent_us: number;
  /** the narrowest bandwidth (bytes per us) beside the layers' GEMVs: each hop's GBps_under_compute where given */
  under_compute_capacity: number;
  /**
   * a large copy's pace (the link's bulk_GBps): the bytes of one copy beyond bulk_from_bytes take
   * bulk_work of the route's capacity per byte (the link's GBps / bulk_GBps); -1 where the route has
   * none (more than one hop, no bulk_GBps, or a tier port slower than the link or its bulk pace)
   */
  bulk_from_bytes: number;
  bulk_work: number;
  /** the link's request_us (file requests timed by size) on a route of that one link; null elsewhere */
  request_us: readonly (readonly [number, number])[] | null;
  /** the link's batch_us (a file request batch's fixed time) on a route of that one link; 0 elsewhere */
  batch_us: number;
}

export class Topology {
  readonly network: FlowNetwork;
  readonly tiers: TierSpec[];
  private readonly routes = new Map<string, Route>();
  private readonly adjacency = new Map<string, Hop[]>();

  constructor(engine: Engine, readonly profile: HardwareProfile) {
    this.network = new FlowNetwork(engine);
    this.tiers = profile.tiers;
    for (const t of profile.tiers) {
      this.network.addResource(`${t.name}:read`, t.read_GBps);
      this.network.addResource(`${t.name}:write`, t.write_GBps);
      this.adjacency.set(t.name, []);
    }
    for (const l of profile.links) {
      const ab = `${l.name}:${l.a}->${l.b}`;
      const ba = `${l.name}:${l.b}->${l.a}`;
      this.network.addResource(ab, l.a_to_b.GBps, l.copy_engines);
      this.network.addResource(ba, l.b_to_a.GBps, l.copy_engines);
      const hop = (to: string, key: string, d: LinkDirection): Hop => ({ to, key, alpha_us: d.alpha_us, busy_us: d.alpha_under_compute_us ?? d.alpha_us, switch_us: d.switch_us ?? 0, switch_busy_us: d.switch_under_compute_us ?? d.switch_us ?? 0, spread_us: d.spread_us ?? 0, adjacent_us: d.adjacent_us ?? 0, busy_GBps: d.GBps_under_compute ?? d.GBps, GBps: d.GBps, bulk_GBps: d.bulk_GBps ?? Number.NaN, bulk_from_bytes: d.bulk_from_bytes ?? -1, request_us: d.request_us ?? null, batch_us: d.batch_us ?? 0 });
      this.adjacency.get(l.a)!.push(hop(l.b, ab, l.a_to_b));
      this.adjacency.get(l.b)!.push(hop(l.a, ba, l.b_to_a));
    }
  }

  tier(name: string): TierSpec {
    const t = this.tiers.find((x) => x.name === name);
    if (!t) throw new Error(`unknown tier "${name}" (tiers: ${this.tiers.map((x) => x.name).join(', ')})`);
    return t;
  }

  /** Shortest route (fewest hops) from one tier to another. */
  route(from: string, to: string): Route {
    const key = `${from}>${to}`;
    const cached = this.routes.get(key);
    if (cached) return cached;
    const src = this.tier(from);
    const dst = this.tier(to);
    const prev = new Map<string, { node: string; hop: Hop }>();
    const seen = new Set([from]);
    const queue = [from];
    while (queue.length > 0) {
      const n = queue.shift()!;
      if (n === to) break;
      for (const e of this.adjacency.get(n)!) {
        if (seen.has(e.to)) continue;
        seen.add(e.to);
        prev.set(e.to, { node: n, hop: e });
        queue.push(e.to);
      }
    }
    if (from !== to && !prev.has(to)) throw new Error(`no route from tier ${from} to ${to}`);
    const hops: string[] = [];
    let alpha = src.read_latency_us + dst.write_latency_us;
    let busy = alpha;
    let switchUs = 0;
    let switchBusy = 0;
    let spread = 0;
    let adjacent = 0;
    let busyCap = Math.min(src.read_GBps, dst.write_GBps) * 1e3;
    for (let n = to; n !== from; ) {
      const p = prev.get(n)!;
      hops.unshift(p.hop.key);
      busyCap = Math.min(busyCap, p.hop.busy_GBps * 1e3);
      alpha += p.hop.alpha_us;
      busy += p.hop.busy_us;
      switchUs += p.hop.switch_us;
      switchBusy += p.hop.switch_busy_us;
      spread += p.hop.spread_us;
      adjacent += p.hop.adjacent_us;
      n = p.node;
    }
    const resources = [this.network.get(`${from}:read`), ...hops.map((h) => this.network.get(h)), this.network.get(`${to}:write`)];
    // a large copy's pace: on a route of one link whose tier ports take that pace
    const only = hops.length === 1 ? prev.get(to)!.hop : undefined;
    const bulk = only !== undefined && only.bulk_from_bytes >= 0 && only.bulk_GBps > 0 && Math.min(src.read_GBps, dst.write_GBps) >= Math.max(only.GBps, only.bulk_GBps);
    const r: Route = { from, to, hops, resources, alpha_us: alpha, alpha_under_compute_us: busy, switch_us: switchUs, switch_under_compute_us: switchBusy, spread_us: spread, adjacent_us: adjacent, under_compute_capacity: busyCap, bulk_from_bytes: bulk ? only.bulk_from_bytes : -1, bulk_work: bulk ? only.GBps / only.bulk_GBps : 1, request_us: only?.request_us ?? null, batch_us: only?.batch_us ?? 0 };
    this.routes.set(key, r);
    return r;
  }

  /** Bytes that crossed each link direction so far. */
  linkBytes(): Record<string, number> {
    const out: Record<string, number> = {};
    const { keys, resources } = this.linkDirections();
    for (let i = 0; i < keys.length; i++) out[keys[i]] = resources[i].bytes;
    return out;
  }

  private directions?: { keys: string[]; resources: Resource[] };
  /** every link direction ("name:a->b") and its resource, in profile order */
  linkDirections(): { keys: string[]; resources: Resource[] } {
    if (!this.directions) {
      const keys = this.profile.links.flatMap((l) => [`${l.name}:${l.a}->${l.b}`, `${l.name}:${l.b}->${l.a}`]);
      this.directions = { keys, resources: keys.map((k) => this.network.get(k)) };
    }
    return this.directions;
  }
}
