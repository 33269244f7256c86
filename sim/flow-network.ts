/**
 * Transfers over shared resources (link directions, tier read/write ports) with a fluid model:
 * a transfer first waits for a copy engine on each link direction of its route, then spends its
 * fixed latency alpha, then moves its bytes at a rate set by max-min fair sharing of every resource
 * on its route among the transfers moving bytes at that moment (progressive filling). Rates are
 * recomputed whenever a transfer starts or finishes, so concurrent transfers share bandwidth exactly.
 */
import type { Engine } from './engine.js';
import { Signal } from './signal.js';
import { objectArray } from '../common/array-kinds.js';

export interface Resource {
  name: string;
  /** bytes per microsecond (1 GB/s = 1e3 B/us) */
  capacity: number;
  /** max transfers holding it at once (copy engines); Infinity = unlimited */
  slots: number;
  inUse: number;
  queue: Transfer[];
  /** bytes that completed through this resource */
  bytes: number;
}

/** a resource's scratch for the rate computation (FlowNetwork.computeRates) */
interface RateScratch {
  /** computeRates call that last set capLeft and users */
  stamp: number;
  capLeft: number;
  users: number;
}

export interface Transfer {
  id: number;
  bytes: number;
  remaining: number;
  alpha_us: number;
  route: Resource[];
  rate: number;
  /** time bytes started flowing (after alpha), NaN before */
  flowStart: number;
  issued: number;
  started: number;
  /** its completion; null for a transfer with a sink (FlowNetwork.send) */
  done: Signal | null;
  label: string;
}

/** What a transfer sent with FlowNetwork.send calls when its bytes have arrived (in place of a signal). */
export interface FlowSink {
  flowDone(): void;
}

const EPS_BYTES = 1e-6;

/**
 * a transfer is its own alpha event: its run() starts its bytes flowing. One sent with a sink
 * (FlowNetwork.send) is reused for a later send once it has finished (nothing outside the network
 * holds it): no object per copy.
 */
class Flow implements Transfer {
  // (numeric fields start as numbers, not undefined as a declared field or a parameter property does:
  // V8 then keeps each as a double written in place; a field that starts undefined takes any value,
  // and every double written to it is a new heap number)
  id = 0;
  bytes = 0;
  remaining = 0;
  alpha_us = 0;
  rate = 0;
  flowStart = Number.NaN;
  issued = 0;
  started = Number.NaN;
  route: Resource[];
  sink: FlowSink | null;
  constructor(
    private readonly net: FlowNetwork,
    id: number,
    bytes: number,
    alpha_us: number,
    route: Resource[],
    issued: number,
    readonly label: string,
    readonly done: Signal | null,
    sink: FlowSink | null,
  ) {
    this.id = id;
    this.bytes = bytes;
    this.remaining = bytes;
    this.alpha_us = alpha_us;
    this.route = route;
    this.issued = issued;
    this.sink = sink;
  }

  /** a finished flow of send() becomes a new one: the state the constructor gives it */
  reuse(id: number, bytes: number, alpha_us: number, route: Resource[], issued: number, sink: FlowSink, work: number): void {
    this.id = id;
    this.bytes = bytes;
    this.remaining = work;
    this.alpha_us = alpha_us;
    this.route = route;
    this.issued = issued;
    this.sink = sink;
    this.rate = 0;
    this.flowStart = Number.NaN;
    this.started = Number.NaN;
  }

  run(): void {
    this.net.beginFlow(this, true);
  }
}

/**
 * Room the network's scratch lists start with: stores at their ends (past what a new list holds)
 * would throw away code compiled in an earlier replay, whose lists had grown; beyond it they grow as
 * before.
 */
const SCRATCH_ROOM = 64;

/** unused flows a network starts with, for send() to take (more than the transfers a replay has moving at once) */
const FRESH_FLOWS = 16;
const NO_ROUTE: Resource[] = [];

/** a list of `n` stale entries (null), of the kind that holds objects (see objectArray) */
function scratchList<T>(n: number): T[] {
  const a = objectArray<T | null>();
  for (let i = 0; i < n; i++) a.push(null);
  return a as T[];
}

export class FlowNetwork {
  readonly resources = new Map<string, Resource>();
  /** the transfers moving bytes: flowing[0..nFlowing) (entries after them are stale) */
  private readonly flowing: Transfer[] = scratchList(SCRATCH_ROOM);
  private nFlowing = 0;
  private lastUpdate = 0;
  /** sequence number of the latest tick event scheduled */
  private tickSeq = -1;
  private nextId = 0;
  /** computeRates' scratch: its call count and the resources it fills (entries after those it wrote are stale) */
  private rateStamp = 0;
  private readonly rateResources: (Resource & RateScratch)[] = scratchList(SCRATCH_ROOM);
  /** onTick's list of the transfers that finish (entries after the ones it wrote are stale) */
  private readonly finishedScratch: Transfer[] = scratchList(SCRATCH_ROOM);
  /** event priority used for this network's events */
  constructor(
    private readonly engine: Engine,
    private readonly priority = 1,
  ) {
    for (let i = 0; i < FRESH_FLOWS; i++) this.fresh.push(new Flow(this, 0, 0, 0, NO_ROUTE, 0, '', null, null));
  }

  addResource(name: string, GBps: number, slots = Infinity): Resource {
    if (this.resources.has(name)) throw new Error(`resource ${name} defined twice`);
    if (!(GBps > 0)) throw new Error(`resource ${name}: bandwidth must be > 0 (got ${GBps})`);
    const r: Resource & RateScratch = { name, capacity: GBps * 1e3, slots, inUse: 0, queue: [], bytes: 0, stamp: 0, capLeft: 0, users: 0 };
    this.resources.set(name, r);
    return r;
  }

  get(name: string): Resource {
    const r = this.resources.get(name);
    if (!r) throw new Error(`unknown resource ${name}`);
    return r;
  }

  /** Start a transfer now (it may queue for copy engines). Returns its completion signal. */
  transfer(route: Resource[], bytes: number, alpha_us: number, label = ''): Transfer & { done: Signal } {
    const t = new Flow(this, this.nextId++, bytes, alpha_us, route, this.engine.now, label, new Signal(), null);
    this.tryAcquire(t);
    return t as Flow & { done: Signal };
  }

  /**
   * Start a transfer now, as transfer() does; when it completes, sink.flowDone() is called (no signal is
   * made). `work`: the bytes' worth of the route's capacity it takes (default `bytes`; less for a large
   * copy that moves faster than the capacity); the resources count `bytes` as crossed.
   */
  send(route: Resource[], bytes: number, alpha_us: number, sink: FlowSink, work = bytes): void {
    const free = this.free;
    const fresh = this.fresh;
    // (a finished flow, else an unused one, taken the same way: a new network's first sends take unused
    // ones, and making new flows there instead would be a branch that code compiled while an earlier
    // network's flows were reused has no type feedback for, and throws away)
    const from = free.length !== 0 ? free : fresh;
    let t: Flow;
    if (from.length !== 0) {
      t = from.pop()!;
      t.reuse(this.nextId++, bytes, alpha_us, route, this.engine.now, sink, work);
    } else {
      t = new Flow(this, this.nextId++, bytes, alpha_us, route, this.engine.now, '', null, sink);
      t.remaining = work;
    }
    this.sending = t;
    this.tryAcquire(t);
    this.sending = null;
    // one that completed at once is reported at the end of send(), before it returns (after tryAcquire has
    // finished with the network's state)
    if (this.sentDone) {
      this.sentDone = false;
      t.sink = null;
      if (this.reuseFlows) free.push(t);
      sink.flowDone();
    }
  }
  /** the finished flows of send(), for it to reuse (the network holds none of them any more) */
  private readonly free: Flow[] = objectArray();
  /** flows made with the network and not used yet, for send() to take where none has finished */
  private readonly fresh: Flow[] = objectArray();
  /** whether send() reuses finished flows (on by default; off, every transfer is a new object) */
  reuseFlows = true;
  /** the transfer send() is starting, and whether it completed during that */
  private sending: Flow | null = null;
  private sentDone = false;

  /** Number of transfers currently moving bytes. */
  get active(): number {
    return this.nFlowing;
  }

  private tryAcquire(t: Transfer): void {
    const route = t.route;
    for (let i = 0; i < route.length; i++) {
      const r = route[i];
      if (r.inUse >= r.slots) {
        r.queue.push(t);
        return;
      }
    }
    for (let i = 0; i < route.length; i++) route[i].inUse++;
    t.started = this.engine.now;
    if (t.alpha_us > 0) this.engine.after(t.alpha_us, t as Flow, this.priority);
    else this.beginFlow(t);
  }

  /**
   * (called by a transfer's alpha event, `event` true, or by tryAcquire for a transfer without alpha)
   * Its bytes start flowing. From its alpha event, when nothing else is due until the next transfer
   * ends, that end is handled here (the clock moved on to it) instead of on a tick event of its own.
   */
  beginFlow(t: Transfer, event = false): void {
    this.advance();
    t.flowStart = this.engine.now;
    if (t.remaining <= EPS_BYTES) {
      this.finish(t);
      this.reschedule();
      return;
    }
    this.flowing[this.nFlowing++] = t;
    if (event && this.inlineTicks) this.rescheduleAhead();
    else this.reschedule();
  }

  /**
   * Whether an alpha event handles the next end at once when nothing else is due before it (on by
   * default). Off, every end is a tick event; the timeline is the same to the bit.
   */
  inlineTicks = true;

  /**
   * reschedule() at the end of an alpha event: when the engine has nothing due at or before the next
   * end and its running loop would run a tick then, the clock moves on to the end and onTick() runs
   * now, as the tick would (the ticks scheduled before are stale, as a new tick makes them).
   */
  private rescheduleAhead(): void {
    this.computeRates();
    const flows = this.flowing;
    let next = Infinity;
    for (let i = 0, n = this.nFlowing; i < n; i++) next = Math.min(next, flows[i].remaining / flows[i].rate);
    const delay = Math.max(0, next);
    const engine = this.engine;
    const at = engine.now + delay;
    if (engine.ahead(at)) {
      this.tickSeq = -1;
      this.inlined++;
      engine.advanceTo(at);
      this.onTick();
      return;
    }
    this.tickSeq = engine.after(delay, this.tick, this.priority);
  }
  /** ends handled by an alpha event (rescheduleAhead) */
  inlined = 0;

  /** Move every flowing transfer forward to now at its current rate. */
  private advance(): void {
    const now = this.engine.now;
    const dt = now - this.lastUpdate;
    if (dt > 0) {
      const flows = this.flowing;
      for (let i = 0, n = this.nFlowing; i < n; i++) flows[i].remaining -= flows[i].rate * dt;
    }
    this.lastUpdate = now;
  }

  /** Max-min fair rates by progressive filling over the resources of flowing transfers. */
  private computeRates(): void {
    const flows = this.flowing;
    const n = this.nFlowing;
    if (n === 0) return;
    if (n === 1) {
      // one flow: progressive filling gives it its route's narrowest capacity (capacity / 1 users)
      const t = flows[0];
      let share = Infinity;
      const route = t.route;
      for (let i = 0; i < route.length; i++) if (route[i].capacity < share) share = route[i].capacity;
      t.rate = share === Infinity ? -1 : share; // (no finite resource: left unset, as below)
      return;
    }
    // the resources of the flowing transfers in order of first appearance, with their capacity left
    // and unfixed users kept on the resources themselves (stamped by this call)
    const stamp = ++this.rateStamp;
    const used = this.rateResources;
    let nUsed = 0;
    for (let i = 0; i < n; i++) {
      const t = flows[i];
      t.rate = -1;
      for (const r of t.route as (Resource & RateScratch)[]) {
        if (r.stamp !== stamp) {
          r.stamp = stamp;
          r.users = 0;
          used[nUsed++] = r;
        }
        r.capLeft = r.capacity;
        r.users++;
      }
    }
    let unfixed = n;
    while (unfixed > 0) {
      let bottleneck: Resource | null = null;
      let share = Infinity;
      for (let j = 0; j < nUsed; j++) {
        const r = used[j];
        if (r.users === 0) continue;
        const s = r.capLeft / r.users;
        if (s < share) {
          share = s;
          bottleneck = r;
        }
      }
      if (bottleneck === null) break;
      for (let i = 0; i < n; i++) {
        const t = flows[i];
        if (t.rate >= 0 || !t.route.includes(bottleneck)) continue;
        t.rate = share;
        unfixed--;
        for (const r of t.route as (Resource & RateScratch)[]) {
          r.capLeft -= share;
          r.users--;
        }
      }
    }
  }

  private reschedule(): void {
    this.computeRates();
    const n = this.nFlowing;
    if (n === 0) return;
    const flows = this.flowing;
    let next = Infinity;
    for (let i = 0; i < n; i++) next = Math.min(next, flows[i].remaining / flows[i].rate);
    this.tickSeq = this.engine.after(Math.max(0, next), this.tick, this.priority);
  }

  /** the network's tick event: only the latest one scheduled acts (a rate change reschedules it) */
  private readonly tick = (): void => {
    if (this.engine.current === this.tickSeq) this.onTick();
  };

  private onTick(): void {
    this.advance();
    // the finished transfers move to `finished` (reused), the others stay in order in `flowing`
    const flows = this.flowing;
    const finished = this.finishedScratch;
    const now = this.engine.now;
    let k = 0;
    let f = 0;
    for (let i = 0, n = this.nFlowing; i < n; i++) {
      const t = flows[i];
      // tolerances absorb floating-point drift from repeated rate changes: a transfer within a
      // picosecond of its end is done (the clock could not advance by less anyway)
      const dt = t.remaining / t.rate;
      if (t.remaining <= EPS_BYTES + t.bytes * 1e-12 || dt < 1e-6 || now + dt === now) finished[f++] = t;
      else flows[k++] = t;
    }
    this.nFlowing = k;
    for (let i = 0; i < f; i++) this.finish(finished[i]);
    this.reschedule();
  }

  private finish(t: Transfer): void {
    t.remaining = 0;
    let freed: Resource[] | null = null;
    const route = t.route;
    for (let i = 0; i < route.length; i++) {
      const r = route[i];
      r.inUse--;
      r.bytes += t.bytes;
      if (r.queue.length > 0) (freed ??= []).push(r);
    }
    const f = t as Flow;
    if (f.done) f.done.fire(this.engine.now);
    else if (f === this.sending) this.sentDone = true;
    else {
      // finished: free for reuse before its sink runs (which may send the next copy with it)
      const sink = f.sink!;
      f.sink = null;
      if (this.reuseFlows) this.free.push(f);
      sink.flowDone();
    }
    if (freed) for (const r of freed) {
      while (r.queue.length > 0 && r.inUse < r.slots) {
        const q = r.queue.shift()!;
        this.tryAcquire(q);
        if (r.queue.includes(q)) break;
      }
    }
  }
}
