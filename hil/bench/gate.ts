// A gate for timed trials: GEMVs on the compute stream that keep the GPU busy while the host queues
// a trial, then an event `start`. Everything of the trial is queued before the GPU reaches `start`,
// so the host's launch time (the N-API call, argument checks, the first launch of a batch) is not
// in the time from `start` to the trial's end event. Without it, the first op of a trial started
// only once the host had launched it, and that gap was timed (lab/notes/HIL-NOTES.md, "The attention
// bench timed the host's launch of each trial's first call").
//
// Sizing: a gate of n GEMVs covers work queued in w us when n * (gemvUs - launchUs) >= w; each kind
// of trial is sized with margin from its own last enqueue time, at most MAX_GATE GEMVs (well inside
// the launch queue: once a gate has more launches than the queue holds, each launch waits for a
// GEMV to end, and a gate sized from that time grows from trial to trial: the overlap bench's
// gates reached ~250 ms on the H100 that way). A trial's gate "held" when it lasted at least the
// trial's whole enqueue time, its own launches included.
import type { NativeBackend } from '../addon-types.js';
import { median } from '../timing/median.js';
import { timeOp } from '../timing/time-op.js';

export const GATE_COLS = 4096;
/** 128 MiB of FP16 weights: one GEMV (~45 us on the H100) takes longer than the host takes to launch it */
export const GATE_ROWS = 16384;
export const MAX_GATE = 256;

/**
 * GEMVs in a gate that covers `workUs` of host queuing with margin (1.5x + 20 us): each GEMV gains
 * its device time less its launch time, counted as at least a quarter of the device time; 1 ..
 * MAX_GATE.
 */
export function gateReps(workUs: number, gemvUs: number, launchUs: number): number {
  return Math.min(MAX_GATE, Math.max(1, Math.ceil((1.5 * workUs + 20) / Math.max(gemvUs - launchUs, gemvUs / 4))));
}

export interface GateTrial {
  gateMs: number;
  /** host time from the gate's first launch to the trial's last op (ms) */
  enqueueMs: number;
  held: boolean;
}

export class ComputeGate {
  /** recorded after the gate on the compute stream: the timed trial starts here */
  readonly start: number;
  private readonly g0: number;
  private readonly workUs = new Map<string, number>();
  private gemvUs = 1;
  private launchUs = 0;
  private pending: { kind: string; reps: number; t0: number; t1: number } | undefined;

  private constructor(
    private readonly b: NativeBackend,
    private readonly regions: number[],
    private readonly gemv: { w: number; x: number; y: number; rows: number; cols: number },
    private readonly now: () => number,
  ) {
    this.g0 = b.createEvent();
    try {
      this.start = b.createEvent();
    } catch (e) {
      b.destroyEvent(this.g0);
      throw e;
    }
  }

  /**
   * Allocates the gate's GEMV (rows x 4096 FP16 weights) and times one. `now` is the host clock in
   * ms (performance.now; tests script it).
   */
  static async open(b: NativeBackend, rows = GATE_ROWS, now: () => number = () => performance.now()): Promise<ComputeGate> {
    if (!Number.isInteger(rows) || rows < 1) throw new Error(`gate rows: expected a positive integer, got ${rows}`);
    const regions: number[] = [];
    let g: ComputeGate | undefined;
    try {
      for (const bytes of [rows * GATE_COLS * 2, GATE_COLS * 4, rows * 4]) regions.push(b.alloc('device', bytes));
      const [w, x, y] = regions as [number, number, number];
      b.write(x, 0, new Float32Array(GATE_COLS).fill(0.5));
      g = new ComputeGate(b, regions, { w, x, y, rows, cols: GATE_COLS }, now);
      const gemv = g.gemv;
      g.gemvUs = Math.max(1, (await timeOp(b, 'compute', 3, 1, () => b.gemv('compute', gemv))) * 1000);
      return g;
    } catch (e) {
      if (g) g.free();
      else for (const r of regions) b.free(r);
      throw e;
    }
  }

  /** GEMVs this gate would queue for a trial of `kind` (500 us of work assumed for a kind not seen yet) */
  repsFor(kind: string): number {
    return gateReps(this.workUs.get(kind) ?? 500, this.gemvUs, this.launchUs);
  }

  /** Queues the gate and `start` on the compute stream; the caller queues the trial next, then release(). */
  hold(kind: string): void {
    if (this.pending) throw new Error(`gate: hold("${kind}") while the trial "${this.pending.kind}" is not released`);
    const reps = this.repsFor(kind);
    const t0 = this.now();
    this.b.record('compute', this.g0);
    this.b.gemv('compute', this.gemv, reps);
    const t1 = this.now();
    this.b.record('compute', this.start);
    this.pending = { kind, reps, t0, t1 };
  }

  /** After the trial is queued: waits for the device, then learns the kind's enqueue time and the GEMV's time. */
  async release(): Promise<GateTrial> {
    const p = this.pending;
    if (!p) throw new Error('gate: release() without a hold()');
    this.pending = undefined;
    const t2 = this.now();
    await this.b.synchronize();
    this.workUs.set(p.kind, (t2 - p.t1) * 1000);
    this.launchUs = ((p.t1 - p.t0) * 1000) / p.reps;
    const gateMs = this.b.elapsedMs(this.g0, this.start);
    this.gemvUs = Math.max(1, (gateMs * 1000) / p.reps);
    const enqueueMs = t2 - p.t0;
    return { gateMs, enqueueMs, held: gateMs >= enqueueMs };
  }

  /**
   * hold(kind), enqueue() (the trial's ops, queued synchronously), release(). If enqueue throws, the
   * gate is given up without learning anything from the partial trial (the device drained) and the
   * error goes on, so that the gate stays usable and sized as before.
   */
  async trial(kind: string, enqueue: () => void): Promise<GateTrial> {
    this.hold(kind);
    let queued: unknown;
    try {
      queued = enqueue();
    } catch (e) {
      this.pending = undefined;
      await this.b.synchronize().catch(() => undefined);
      throw e;
    }
    if (queued !== undefined && typeof (queued as { then?: unknown }).then === 'function') {
      this.pending = undefined;
      await this.b.synchronize().catch(() => undefined);
      throw new Error(`gate: trial("${kind}") got an async enqueue; its ops must be queued before it returns`);
    }
    return this.release();
  }

  free(): void {
    this.b.destroyEvent(this.g0);
    this.b.destroyEvent(this.start);
    for (const r of this.regions) this.b.free(r);
  }
}

/**
 * As timeOp, each trial behind the gate: the median per-op time over `trials` trials of `repeat`
 * ops (enqueue() queues them on the compute stream), in how many trials the gate held, and the
 * shortest gate (ms).
 */
export async function timeOpGated(
  b: NativeBackend,
  gate: ComputeGate,
  trials: number,
  repeat: number,
  enqueue: () => void,
  kind = 'op',
): Promise<{ ms: number; held: number; trials: number; gateMs: number }> {
  for (const [name, v] of [['trials', trials], ['repeat', repeat]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`timeOpGated ${name}: expected a positive integer, got ${v}`);
  }
  const e1 = b.createEvent();
  const per: number[] = [];
  let held = 0;
  let gateMs = Infinity;
  try {
    for (let t = -2; t < trials; t++) {
      // two warm-up trials: the first sizes the gate from a guess, the second from this kind's enqueue time
      const r = await gate.trial(kind, () => {
        enqueue();
        b.record('compute', e1);
      });
      if (t < 0) continue;
      if (r.held) held++;
      gateMs = Math.min(gateMs, r.gateMs);
      per.push(b.elapsedMs(gate.start, e1) / repeat);
    }
  } finally {
    b.destroyEvent(e1);
  }
  return { ms: median(per), held, trials, gateMs };
}
