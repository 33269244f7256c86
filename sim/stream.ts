/**
 * An in-order execution queue like a CUDA stream: each operation starts when the previous one on
 * the stream has finished and every signal it waits on has fired. A stream records what it ran
 * (for the Chrome trace) and how long it sat idle waiting on other streams (stall).
 */
import type { Engine, EventTask } from './engine.js';
import type { IntervalLog } from './interval-log.js';
import { allDone, Signal } from './signal.js';
import { objectArray } from '../common/array-kinds.js';

export interface StreamOp {
  name: string;
  /** category shown in the trace (attention, linear, h2d, d2h, quantize, ...) */
  cat: string;
  waits: Signal[];
  /** start the work; call `finish` when it completes */
  run: (finish: () => void) => void;
  args?: Record<string, number | string>;
}

export interface TraceSpan {
  stream: string;
  name: string;
  cat: string;
  start: number;
  end: number;
  args?: Record<string, number | string>;
}

/**
 * An operation queued on a stream, from its enqueue to its end: it is what waits for the previous
 * operation's end and for its own waits, its start event, and the caller of finish() when its work
 * completes (one object for all of them: no closure per operation). A subclass says what the work is
 * (begin(), and step() for events of its own); a generic StreamOp is wrapped in one (Queued).
 */
export abstract class StreamTask implements EventTask {
  /**
   * what its next run() is: 0 the previous operation's end, 1 one of its waits firing (`left` of
   * them to go), 2 its start event, 3 an event of its own (step())
   */
  phase = 0;
  left = 0;
  /** when the previous operation ended; set once that has happened */
  ready = Number.NaN;
  /** when it started */
  began = 0;
  /** the earliest it may start: when the host issued it (Stream.issueAt at its enqueue) */
  notBefore = 0;
  /** its completion (set by the stream when it is queued) */
  done: Signal | null = null;
  constructor(
    public stream: Stream,
    public name: string,
    /** category shown in the trace */
    public cat: string,
    public waits: readonly Signal[],
    public args: StreamOp['args'],
  ) {}

  /**
   * A task whose operation has ended (its signal fired, nothing holds it) becomes a new one, as the
   * constructor makes it (a subclass that reuses its tasks calls it).
   */
  protected renew(stream: Stream, name: string, cat: string, waits: readonly Signal[], args: StreamOp['args']): void {
    this.stream = stream;
    this.name = name;
    this.cat = cat;
    this.waits = waits;
    this.args = args;
    this.phase = 0;
    this.left = 0;
    this.ready = Number.NaN;
    this.began = 0;
    this.notBefore = 0;
    this.done = null;
  }

  run(): void {
    const p = this.phase;
    if (p === 0) this.stream.afterPrevious(this);
    else if (p === 1) {
      if (--this.left === 0) this.stream.waited(this);
    } else if (p === 2) this.stream.start(this);
    else this.step();
  }

  /** Start the work (the stream calls it once, at the start); call finish() when the work completes. */
  abstract begin(): void;

  /** An event of its own (scheduled with phase 3); none by default. */
  step(): void {
    throw new Error(`stream op ${this.name}: no event of its own`);
  }

  /** The work has completed (now). */
  finish(): void {
    this.stream.end(this);
  }
}

/** A generic StreamOp on a stream. */
class Queued extends StreamTask {
  constructor(
    stream: Stream,
    readonly op: StreamOp,
  ) {
    super(stream, op.name, op.cat, op.waits, op.args);
  }

  begin(): void {
    this.op.run(() => this.finish());
  }
}

/**
 * A kernel of `us` queued behind work whose end is not known yet (see Stream.timed()): its end is its
 * own event. An ended one is reused by its stream for a later kernel (Stream.reuseTasks).
 */
class KernelTask extends StreamTask {
  us = 0;
  /** where its run is logged (Stream.log), if its name is logged */
  log: IntervalLog | null = null;
  /** its own copy of the waits it was queued with (reused with it) */
  private own: Signal[] | null = null;

  /** a new kernel task of `stream`; set() says what it runs */
  constructor(stream: Stream) {
    super(stream, '', 'kernel', NO_WAITS, undefined);
  }

  /** A new task, or an ended one (nothing holds it) made new: the kernel it runs, and a copy of `waits`. */
  set(name: string, cat: string, waits: readonly Signal[], args: StreamOp['args'], us: number, log: IntervalLog | null): KernelTask {
    let w: readonly Signal[] = NO_WAITS;
    if (waits.length !== 0) {
      const own = (this.own ??= []);
      // (cut by pops: setting an array's length is a slow runtime call)
      while (own.length > waits.length) own.pop();
      for (let i = 0; i < waits.length; i++) own[i] = waits[i];
      w = own;
    }
    this.renew(this.stream, name, cat, w, args);
    this.us = us;
    this.log = log;
    return this;
  }

  begin(): void {
    this.stream.runKernel(this);
  }

  override step(): void {
    this.finish();
    // ended: its signal has fired and its events are done with it
    const s = this.stream;
    if (s.reuseTasks) s.freeKernels.push(this);
  }
}

const NO_WAITS: readonly Signal[] = [];

export class Stream {
  /**
   * completion of the last queued operation; null after a lazy kernel queued by enqueueKernel(): its
   * due signal (ending at tailEnd) is made when something asks for it (tailSignal())
   */
  private tail: Signal | null = Signal.fired(0);
  /** when the last queued operation ends, if that is already known (NaN otherwise); see enqueueTimed */
  private tailEnd = 0;
  /** total time spent waiting on other streams' signals after the previous op ended */
  stallUs = 0;
  /** total time spent running operations */
  busyUs = 0;
  onSpan: ((s: TraceSpan) => void) | null = null;
  /**
   * Lazy: an enqueueTimed() op on the fast path gets a due signal (no engine event unless
   * something waits on it) and reports no span. For steps that are not traced.
   */
  lazy = false;
  /**
   * Optional, for enqueueTimed()/enqueueKernel() ops: called when such an op starts; the function it
   * returns is called when its `us` have passed and gives the time (>= 0) the op runs on after that.
   * The executor lengthens kernels by the time they shared with copies through HBM (sim-executor.ts).
   * With it, those ops always take the event path (their end is not known at enqueue time).
   */
  stretch: ((start: number) => (end: number) => number) | null = null;
  /** with the stretch hook: the end of the last queued timed op as far as known (see stretched()); NaN when not */
  private planEnd = 0;
  /** with the stretch hook: the end of the latest chain of ops whose start was known at enqueue (kept when a later op's is not) */
  private knownEnd = 0;
  /**
   * Optional: when the enqueueTimed()/enqueueKernel() ops named in `names` run, logged in `intervals`
   * (the executor logs the compute stream's GEMVs to price the copies beside them).
   */
  log: { intervals: IntervalLog; names: ReadonlySet<string> } | null = null;
  /**
   * When the host issues the ops enqueued from now on (the executor's host clock; 0: never behind):
   * an op starts no earlier than that, as a GPU stream cannot run an op the host has not issued yet.
   */
  issueAt = 0;
  /** the latest stretch of back-to-back operations, started or scheduled: [busyFrom, busyTo) */
  private busyFrom = 0;
  private busyTo = 0;

  /** ended kernel tasks of this stream, for timed() to reuse (reuseTasks, on by default: off, every one is a new object) */
  readonly freeKernels: KernelTask[] = objectArray();
  reuseTasks = true;

  constructor(
    private readonly engine: Engine,
    readonly name: string,
    /** engine event priority of this stream's events (lower runs first at equal times) */
    readonly priority: number,
  ) {}

  /** Queue an operation; returns the signal fired when it completes. */
  enqueue(op: StreamOp): Signal {
    return this.enqueueTask(new Queued(this, op));
  }

  /** Queue a task of this stream (task.stream is this stream; queued once); returns the signal fired when it completes. */
  enqueueTask(task: StreamTask): Signal {
    const prev = this.tailSignal();
    const done = new Signal();
    task.done = done;
    task.notBefore = this.issueAt;
    this.tail = done;
    this.tailEnd = Number.NaN;
    this.planEnd = Number.NaN; // (stretched() sets it again for its own ops)
    // (what has fired already is followed at once, without a callback)
    if (prev.ready()) this.afterPrevious(task);
    else prev.then(task);
    return done;
  }

  /**
   * The previous op has ended: once the op's waits have fired, it starts (as an engine event, so
   * equal-time starts follow stream priority). (Called by StreamTask only.)
   */
  afterPrevious(q: StreamTask): void {
    q.ready = this.engine.now;
    const waits = q.waits;
    if (allDone(waits)) {
      q.phase = 2;
      this.engine.at(q.ready > q.notBefore ? q.ready : q.notBefore, q, this.priority);
      return;
    }
    // the waits not fired now are counted, then each calls q.run() when it fires (the last one schedules the start)
    let left = 0;
    for (let i = 0; i < waits.length; i++) if (!waits[i].done) left++;
    q.phase = 1;
    q.left = left;
    for (let i = 0; i < waits.length; i++) if (!waits[i].done) waits[i].then(q);
  }

  /** Every wait of an op has fired (now): its start event. (Called by StreamTask only.) */
  waited(q: StreamTask): void {
    q.phase = 2;
    const now = this.engine.now;
    this.engine.at(now > q.notBefore ? now : q.notBefore, q, this.priority);
  }

  /** The start of a KernelTask: its end is known once it starts. (Called by KernelTask only.) */
  runKernel(q: KernelTask): void {
    this.busyTo = this.engine.now + q.us; // its end is known once it starts
    q.log?.add(this.engine.now, this.busyTo);
    q.phase = 3;
    this.engine.after(q.us, q, this.priority);
  }

  /** (called by StreamTask only) */
  start(q: StreamTask): void {
    const start = this.engine.now;
    q.began = start;
    this.stallUs += start - q.ready;
    if (start > this.busyTo) this.busyFrom = start;
    this.busyTo = Infinity; // running, end not known yet
    q.begin();
  }

  /** (called by StreamTask.finish only) */
  end(q: StreamTask): void {
    const end = this.engine.now;
    this.busyTo = end;
    this.busyUs += end - q.began;
    this.onSpan?.({ stream: this.name, name: q.name, cat: q.cat, start: q.began, end, args: q.args });
    q.done!.fire(end);
  }

  /**
   * Queue an operation of known duration `us` (a kernel). Same timeline as enqueue() with a
   * `run` that finishes after `us`: it starts when the previous operation has ended and its waits
   * have fired. When both are already known at enqueue time (the previous operation's end is known and
   * every wait has fired), its start and end are computed here and one engine event fires its signal
   * at the end (none on a lazy stream: a due signal); otherwise it falls back to enqueue().
   */
  enqueueTimed(name: string, cat: string, us: number, waits: readonly Signal[], args?: StreamOp['args']): Signal {
    return this.timed(name, cat, us, waits, args, false)!;
  }

  /**
   * enqueueTimed() for a caller that does not need the op's signal: on a lazy stream's fast path no
   * signal is made for it at all (the stream's idle signal is made when asked for). Same timeline.
   */
  enqueueKernel(name: string, cat: string, us: number, waits: readonly Signal[], args?: StreamOp['args']): void {
    this.timed(name, cat, us, waits, args, true);
  }

  private timed(name: string, cat: string, us: number, waits: readonly Signal[], args: StreamOp['args'] | undefined, quiet: boolean): Signal | null {
    if (this.stretch) return this.stretched(name, cat, us, waits, args, this.stretch);
    if (Number.isNaN(this.tailEnd) && this.tail!.done) this.tailEnd = this.tail!.at;
    const e = this.engine;
    let known = !Number.isNaN(this.tailEnd);
    for (let i = 0; known && i < waits.length; i++) known = waits[i].done;
    const log = this.log !== null && this.log.names.has(name) ? this.log.intervals : null;
    if (!known) {
      const free = this.freeKernels;
      return this.enqueueTask((free.length !== 0 ? free.pop()! : new KernelTask(this)).set(name, cat, waits, args, us, log));
    }
    // waits fired at or before now; the op is ready when the previous one ends (or now, if later),
    // and starts then or when the host issues it (the wait for the host is stall, as on the event path)
    const ready = Math.max(this.tailEnd, e.now);
    const start = ready > this.issueAt ? ready : this.issueAt;
    this.stallUs += start - ready;
    const end = start + us;
    log?.add(start, end);
    this.busyUs += end - start;
    if (start > this.busyTo) this.busyFrom = start;
    this.busyTo = end;
    this.tailEnd = end;
    if (this.lazy) {
      if (quiet) {
        this.tail = null;
        return null;
      }
      return (this.tail = Signal.due(e, end, this.priority));
    }
    const done = new Signal();
    this.tail = done;
    e.at(end, () => {
      this.onSpan?.({ stream: this.name, name, cat, start, end, args });
      done.fire(end);
    }, this.priority);
    return done;
  }

  /**
   * A timed op with the stretch hook: it runs on engine events (its end is known only when its `us`
   * have passed). The busy stretch that busyAt()/busyUntil report still covers the ops queued behind
   * it, as on the fast path: planEnd follows the queued ops' ends (their base times plus the
   * extensions made so far), and is unknown (NaN) from an op whose start is not known at enqueue time
   * until the stream drains. An extension still to come is not in it (the stretch ends that much early).
   */
  private stretched(name: string, cat: string, us: number, waits: readonly Signal[], args: StreamOp['args'] | undefined, stretch: (start: number) => (end: number) => number): Signal {
    const e = this.engine;
    const tail = this.tailSignal();
    let plan = Number.isNaN(this.planEnd) && tail.done ? tail.at : this.planEnd;
    let known = !Number.isNaN(plan);
    for (let i = 0; known && i < waits.length; i++) known = waits[i].done;
    if (known) {
      const start = Math.max(plan, e.now, this.issueAt);
      plan = start + us;
      if (start > this.busyTo) this.busyFrom = start;
      if (this.busyTo !== Infinity) this.busyTo = Math.max(this.busyTo, plan);
      this.knownEnd = Math.max(this.knownEnd, plan);
    } else {
      plan = Number.NaN;
    }
    const log = this.log !== null && this.log.names.has(name) ? this.log.intervals : null;
    const run = (finish: () => void) => {
      const more = stretch(e.now);
      const logged = log ? log.open(e.now, e.now + us) : -1;
      this.busyTo = Math.max(e.now + us, this.knownEnd);
      e.after(us, () => {
        const extra = more(e.now);
        const done = () => {
          log?.close(logged, e.now);
          finish();
          if (this.knownEnd > e.now) this.busyTo = Math.max(this.busyTo, this.knownEnd); // ops queued behind it
        };
        if (!(extra > 0)) return done();
        // the ops queued behind it move with it
        if (this.knownEnd >= e.now) this.knownEnd += extra;
        if (this.planEnd >= e.now) this.planEnd += extra;
        this.busyTo = Math.max(e.now + extra, this.knownEnd);
        e.after(extra, done, this.priority);
      }, this.priority);
    };
    const sig = this.enqueue({ name, cat, waits: waits.slice(), args, run });
    this.planEnd = plan;
    return sig;
  }

  /** Whether an operation of this stream runs (or is scheduled to run) at time t (t >= the latest start). */
  busyAt(t: number): boolean {
    return t >= this.busyFrom && t < this.busyTo;
  }

  /** End of the stretch of back-to-back operations that covers busyAt() times (Infinity: an op of unknown length runs). */
  get busyUntil(): number {
    return this.busyTo;
  }

  /** Signal that fires when everything queued so far has finished. */
  get idle(): Signal {
    return this.tailSignal();
  }

  private tailSignal(): Signal {
    return (this.tail ??= Signal.due(this.engine, this.tailEnd, this.priority));
  }
}
