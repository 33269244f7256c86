/**
 * The timed serving simulation: requests arrive at their (scaled) timestamps, wait in a FIFO
 * admission queue, run with continuous batching on one GPU, and share a prefix KV cache spread over
 * tiers.
 *
 * Memory (HBM is "carved out", not split): HBM holds the prefix cache's tier-0 blocks and the KV of
 * running requests in one pool. A running request holds all its input blocks in HBM (pinned cache
 * blocks, shared with other requests that match them) plus `input + output - blocks` tokens of its
 * own (its output; input past its hashed blocks). All of it is reserved at admission, so a running
 * request is never preempted. Cached blocks nobody uses are evicted on demand, demoted down the
 * tiers, dropped from the last.
 *
 * Admission (head of the queue first, strictly FIFO): look up the leading cached run of the
 * request's blocks; admit when HBM can hold its blocks and reserved tokens after evicting unused
 * blocks and fewer than max-running requests run. Matched blocks found in lower tiers are promoted
 * over the links (route-time.ts: FIFO per link direction) and its prefill waits for them;
 * demotions caused by the admission are sent down the links in the background (they share the
 * links' time with promotions but never delay the GPU). Backpressure: a
 * request that can never fit, that finds the queue full, or that waits past max-queue-ms is refused
 * with a reason. Every request ends served or refused; anything else is an internal error.
 *
 * Batching: each iteration takes one decode token from every request past prefill (admission
 * order), then fills the token budget with prefill chunks (admission order; chunked prefill). A
 * request whose matched prefix is still being computed by an earlier request waits for it. The
 * iteration's time comes from the roofline cost model; tokens appear at its end (the iteration that
 * finishes a prefill also yields the first output token).
 */
import { Engine } from '../sim/engine.js';
import type { ServingRequest } from '../traces/requests/request.js';
import { FloatBuffer } from './float-buffer.js';
import { IterationCost, prefillPairs } from './iteration-cost.js';
import { hitTokensByTier } from './prefix-hits.js';
import { LinkLanes } from './route-time.js';
import type { RefusalReason, RequestRecord } from './request-record.js';
import type { ServingSetup } from './serving-config.js';
import { checkServingOptions } from './serving-config.js';
import { TieredPrefixCache } from './tiered-prefix-cache.js';

export interface ServingRunResult {
  records: RequestRecord[];
  /** every time between two output tokens of one request, in ms */
  tbtMs: Float64Array;
  iterations: number;
  /** GPU time spent in iterations, ms */
  busyMs: number;
  /** time of the last event (last completion or refusal), ms */
  endMs: number;
  tierNames: string[];
  capacityTokens: number[];
  peakTokens: number[];
  promotedBlocks: number[];
  demotedBlocks: number[];
  droppedBlocks: number;
  /** bytes per link direction, key "<link>:<from>-><to>" */
  linkBytes: Record<string, number>;
  peakQueued: number;
  peakRunning: number;
}

export interface ServingHooks {
  /** called after every admission and completion (tests: check invariants as the run goes) */
  onChange?: (sim: ServingSimulation) => void;
  /** called as requests end (served or refused): `done` of `total` requests */
  onProgress?: (done: number, total: number) => void;
}

interface Live {
  r: ServingRequest;
  rec: RequestRecord;
  state: number;
  blocks: number;
  /** reserved HBM tokens outside cache blocks */
  extra: number;
  /** input tokens whose KV exists (matched prefix counts) */
  prefilled: number;
  /** index of this request's first block not yet marked computed */
  nextOwn: number;
  generated: number;
  target: number;
  ready: boolean;
  /** hash of the last matched block (computed by an earlier request), -1 if none */
  dep: number;
  admitUs: number;
  lastTokenUs: number;
  tbtSum: number;
  tbtMax: number;
  /** tokens in the current iteration: > 0 prefill chunk, -1 decode, 0 not in it */
  chunk: number;
}

const WAITING = 0;
const QUEUED = 1;
const RUNNING = 2;
const DONE = 3;

/** event priorities at equal times: completions and transfers first, then arrivals, then timeouts */
const PRIO_ITERATION = 0;
const PRIO_ARRIVAL = 2;
const PRIO_TIMEOUT = 3;

export class ServingSimulation {
  readonly engine = new Engine(4096);
  readonly cache: TieredPrefixCache;
  readonly links: LinkLanes;
  readonly cost: IterationCost;
  /** requests admitted and not finished, in admission order */
  readonly running: Live[] = [];
  private readonly lives: Live[];
  private readonly queue: Live[] = [];
  private qHead = 0;
  private queued = 0;
  private started = false;
  private busy = false;
  private readonly batch: Live[] = [];
  /** every time between tokens, ms */
  private readonly tbt = new FloatBuffer(1 << 16);
  private iterations = 0;
  /** requests served or refused so far */
  private ended = 0;
  private busyUs = 0;
  private lastEventUs = 0;
  private peakQueued = 0;
  private peakRunning = 0;
  private readonly hitScratch: Float64Array;
  private readonly demotedBefore: Float64Array;
  private readonly bt: number;
  private readonly bytesPerBlock: number;

  constructor(
    requests: readonly ServingRequest[],
    blockTokens: number,
    readonly setup: ServingSetup,
    private readonly hooks: ServingHooks = {},
  ) {
    checkServingOptions(setup.options);
    this.bt = blockTokens;
    this.cache = new TieredPrefixCache(setup.tiers, setup.policy, blockTokens);
    this.links = new LinkLanes(setup.hardware);
    this.cost = new IterationCost(setup.model, setup.hardware.gpu);
    this.bytesPerBlock = blockTokens * this.cost.kvBytesPerToken;
    this.hitScratch = new Float64Array(setup.tiers.length);
    this.demotedBefore = new Float64Array(setup.tiers.length);
    const nTiers = setup.tiers.length;
    this.lives = requests.map((r) => {
      const blocks = r.hash_ids.length;
      const covered = Math.min(r.input_tokens, blocks * blockTokens);
      return {
        r,
        rec: newRecord(r, nTiers),
        state: WAITING,
        blocks,
        extra: r.input_tokens - covered + r.output_tokens,
        prefilled: 0,
        nextOwn: 0,
        generated: 0,
        target: Math.max(1, r.output_tokens),
        ready: false,
        dep: -1,
        admitUs: 0,
        lastTokenUs: 0,
        tbtSum: 0,
        tbtMax: 0,
        chunk: 0,
      };
    });
  }

  run(): ServingRunResult {
    if (this.started) throw new Error('ServingSimulation.run: a simulation runs once');
    this.started = true;
    for (const live of this.lives) this.engine.at(this.arrivalUs(live), () => this.arrive(live), PRIO_ARRIVAL);
    this.engine.run();
    for (const live of this.lives) {
      if (live.state !== DONE) {
        throw new Error(`serving simulation: request ${live.r.id} (line ${live.r.line}) ended neither served nor refused (state ${live.state})`);
      }
    }
    if (this.queued !== 0 || this.running.length !== 0) throw new Error('serving simulation: requests left in the queue or running at the end');
    const c = this.cache;
    return {
      records: this.lives.map((l) => l.rec),
      tbtMs: this.tbt.toArray(),
      iterations: this.iterations,
      busyMs: this.busyUs / 1000,
      endMs: this.lastEventUs / 1000,
      tierNames: this.setup.tiers.map((t) => t.name),
      capacityTokens: this.setup.tiers.map((t) => t.capacityTokens),
      peakTokens: [...c.peakTokens],
      promotedBlocks: [...c.promoted],
      demotedBlocks: [...c.demoted],
      droppedBlocks: c.dropped,
      linkBytes: { ...this.links.bytes },
      peakQueued: this.peakQueued,
      peakRunning: this.peakRunning,
    };
  }

  private arrive(live: Live): void {
    const cap0 = this.cache.capacity[0];
    if (live.blocks * this.bt + live.extra > cap0) {
      this.refuse(live, 'exceeds_hbm');
      return;
    }
    live.state = QUEUED;
    this.queue.push(live);
    this.queued++;
    const maxMs = this.setup.options.maxQueueMs;
    if (maxMs !== Infinity) {
      this.engine.after(maxMs * 1000, () => {
        if (live.state !== QUEUED) return;
        this.queued--;
        this.refuse(live, 'queue_timeout');
        this.admitWaiting();
        this.startIteration();
      }, PRIO_TIMEOUT);
    }
    this.admitWaiting();
    if (live.state === QUEUED && this.queued > this.setup.options.maxQueue) {
      this.queued--;
      this.refuse(live, 'queue_full');
    }
    if (this.queued > this.peakQueued) this.peakQueued = this.queued;
    this.startIteration();
  }

  private refuse(live: Live, reason: RefusalReason): void {
    live.state = DONE;
    live.rec.status = 'refused';
    live.rec.reason = reason;
    this.lastEventUs = this.engine.now;
    this.hooks.onProgress?.(++this.ended, this.lives.length);
  }

  /** Admit from the head of the queue while the head fits. */
  private admitWaiting(): void {
    const q = this.queue;
    const maxRunning = this.setup.options.maxRunning;
    while (this.qHead < q.length) {
      const live = q[this.qHead];
      if (live.state !== QUEUED) {
        this.qHead++;
        continue;
      }
      if (this.running.length >= maxRunning) break;
      const ids = live.r.hash_ids;
      const k = this.cache.lookup(ids);
      if (this.cache.fitCount(ids, k, live.extra) < live.blocks) break;
      this.qHead++;
      this.queued--;
      this.admit(live, k);
    }
    if (this.qHead > 4096 && this.qHead * 2 > q.length) {
      q.splice(0, this.qHead);
      this.qHead = 0;
    }
  }

  private admit(live: Live, k: number): void {
    const now = this.engine.now;
    const c = this.cache;
    const r = live.r;
    const ids = r.hash_ids;
    this.demotedBefore.set(c.demoted);
    c.acquire(ids, k, live.blocks, live.extra);
    const rec = live.rec;
    rec.prefix_hit_tokens = hitTokensByTier(c, k, r.input_tokens, this.hitScratch);
    for (let t = 0; t < this.hitScratch.length; t++) rec.hit_tokens[t] = this.hitScratch[t];
    // an input that hit entirely still computes its last token (the logits of the first output)
    const prefillTokens = Math.max(1, r.input_tokens - rec.prefix_hit_tokens);
    rec.prefill_tokens = prefillTokens;
    rec.queue_ms = (now - this.arrivalUs(live)) / 1000;
    live.state = RUNNING;
    live.prefilled = r.input_tokens - prefillTokens;
    live.nextOwn = k;
    live.dep = k > 0 ? ids[k - 1] : -1;
    live.admitUs = now;
    this.running.push(live);
    if (this.running.length > this.peakRunning) this.peakRunning = this.running.length;
    this.sendDemotions();
    const readyAt = this.sendPromotions(c.hitBlocks);
    if (readyAt === now) {
      live.ready = true;
      rec.promote_ms = 0;
    } else {
      this.engine.at(readyAt, () => {
        live.ready = true;
        rec.promote_ms = (this.engine.now - live.admitUs) / 1000;
        this.startIteration();
      }, PRIO_ITERATION);
    }
    this.hooks.onChange?.(this);
  }

  private arrivalUs(live: Live): number {
    return live.r.arrival_ms * this.setup.options.timeScale * 1000;
  }

  /** One transfer per lower tier holding matched blocks, from that tier to HBM; returns when all are done. */
  private sendPromotions(hitBlocks: Int32Array): number {
    const now = this.engine.now;
    const tiers = this.setup.tiers;
    let done = now;
    for (let t = 1; t < hitBlocks.length; t++) {
      if (hitBlocks[t] === 0) continue;
      done = Math.max(done, this.links.transfer(tiers[t].name, tiers[0].name, hitBlocks[t] * this.bytesPerBlock, now));
    }
    return done;
  }

  /** Blocks demoted by the last acquire go down the links, one transfer per tier pair. */
  private sendDemotions(): void {
    const c = this.cache;
    const names = this.setup.tiers;
    for (let t = 0; t < names.length; t++) {
      const n = c.demoted[t] - this.demotedBefore[t];
      if (n === 0) continue;
      this.links.transfer(names[t].name, names[c.demotionTarget(t)].name, n * this.bytesPerBlock, this.engine.now);
    }
  }

  private startIteration(): void {
    if (this.busy) return;
    const opts = this.setup.options;
    const budget = opts.maxBatchTokens;
    const batch = this.batch;
    batch.length = 0;
    let tokens = 0;
    let pairs = 0;
    let kvRead = 0;
    for (const live of this.running) {
      if (tokens >= budget) break;
      if (live.generated === 0 || live.generated >= live.target) continue;
      const ctx = live.r.input_tokens + live.generated;
      live.chunk = -1;
      batch.push(live);
      tokens++;
      pairs += ctx;
      kvRead += ctx - 1;
    }
    for (const live of this.running) {
      if (tokens >= budget) break;
      if (live.generated > 0 || !live.ready) continue;
      if (live.dep >= 0) {
        if (!this.cache.isComputed(live.dep)) continue;
        live.dep = -1;
      }
      const chunk = Math.min(live.r.input_tokens - live.prefilled, budget - tokens);
      live.chunk = chunk;
      batch.push(live);
      tokens += chunk;
      pairs += prefillPairs(live.prefilled, chunk);
      kvRead += live.prefilled;
    }
    if (tokens === 0) return;
    const dt = this.cost.timeUs({ tokens, pairs, kvReadTokens: kvRead });
    this.busy = true;
    this.busyUs += dt;
    this.iterations++;
    this.engine.after(dt, () => this.endIteration(), PRIO_ITERATION);
  }

  private endIteration(): void {
    const now = this.engine.now;
    let finished = 0;
    for (const live of this.batch) {
      if (live.chunk > 0) {
        live.prefilled += live.chunk;
        this.markComputed(live);
        if (live.prefilled === live.r.input_tokens) {
          live.generated = 1;
          live.lastTokenUs = now;
          live.rec.ttft_ms = (now - this.arrivalUs(live)) / 1000;
        }
      } else {
        const dt = now - live.lastTokenUs;
        this.tbt.push(dt / 1000);
        live.tbtSum += dt;
        if (dt > live.tbtMax) live.tbtMax = dt;
        live.generated++;
        live.lastTokenUs = now;
      }
      live.chunk = 0;
      if (live.generated >= live.target) {
        this.finish(live);
        finished++;
      }
    }
    if (finished > 0) {
      let j = 0;
      for (const live of this.running) if (live.state === RUNNING) this.running[j++] = live;
      this.running.length = j;
    }
    this.busy = false;
    if (finished > 0) this.admitWaiting();
    this.startIteration();
  }

  /** Mark this request's own blocks that its prefill has now fully computed. */
  private markComputed(live: Live): void {
    const ids = live.r.hash_ids;
    const input = live.r.input_tokens;
    while (live.nextOwn < live.blocks && Math.min((live.nextOwn + 1) * this.bt, input) <= live.prefilled) {
      this.cache.markComputed(ids[live.nextOwn++]);
    }
  }

  private finish(live: Live): void {
    const now = this.engine.now;
    this.cache.release(live.r.hash_ids, live.blocks, live.extra);
    live.state = DONE;
    this.lastEventUs = now;
    this.hooks.onProgress?.(++this.ended, this.lives.length);
    const rec = live.rec;
    const o = this.setup.options;
    rec.status = 'served';
    rec.finish_ms = now / 1000;
    rec.e2e_ms = (now - this.arrivalUs(live)) / 1000;
    const intervals = live.generated - 1;
    rec.tbt_mean_ms = intervals > 0 ? live.tbtSum / intervals / 1000 : Number.NaN;
    rec.tbt_max_ms = intervals > 0 ? live.tbtMax / 1000 : Number.NaN;
    rec.slo_met = rec.ttft_ms <= o.ttftSloMs && (intervals === 0 || rec.tbt_mean_ms <= o.tbtSloMs);
    this.hooks.onChange?.(this);
  }
}

function newRecord(r: ServingRequest, nTiers: number): RequestRecord {
  return {
    id: r.id,
    line: r.line,
    arrival_ms: r.arrival_ms,
    status: 'refused',
    reason: '',
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    prefix_hit_tokens: 0,
    hit_tokens: new Array<number>(nTiers).fill(0),
    prefill_tokens: 0,
    queue_ms: Number.NaN,
    promote_ms: Number.NaN,
    ttft_ms: Number.NaN,
    tbt_mean_ms: Number.NaN,
    tbt_max_ms: Number.NaN,
    e2e_ms: Number.NaN,
    finish_ms: Number.NaN,
    slo_met: false,
  };
}

/** Run a serving simulation of `requests` and return its records and totals. */
export function simulateServing(
  requests: readonly ServingRequest[],
  blockTokens: number,
  setup: ServingSetup,
  hooks: ServingHooks = {},
): ServingRunResult {
  return new ServingSimulation(requests, blockTokens, setup, hooks).run();
}
