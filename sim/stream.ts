/**
 * An in-order execution queue like a CUDA stream: each operation starts when the previous one on
 * the stream has finished and every signal it waits on has fired. A stream records what it ran
 * (for the Chrome trace) and how long it sat idle waiting on other streams (stall).
 */
import type { Engine } from './engine.js';
import { Signal, whenAll } from './signal.js';

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

export class Stream {
  /** time the last queued operation finishes (NaN while it runs) */
  private tail: Signal = Signal.fired(0);
  /** total time spent waiting on other streams' signals after the previous op ended */
  stallUs = 0;
  /** total time spent running operations */
  busyUs = 0;
  onSpan: ((s: TraceSpan) => void) | null = null;

  constructor(
    private readonly engine: Engine,
    readonly name: string,
    /** engine event priority of this stream's events (lower runs first at equal times) */
    readonly priority: number,
  ) {}

  /** Queue an operation; returns the signal fired when it completes. */
  enqueue(op: StreamOp): Signal {
    const prev = this.tail;
    const done = new Signal();
    this.tail = done;
    prev.then(() => {
      const ready = this.engine.now;
      whenAll(op.waits, () => {
        // run the op as an engine event so equal-time starts follow stream priority
        this.engine.at(this.engine.now, () => {
          const start = this.engine.now;
          this.stallUs += start - ready;
          op.run(() => {
            const end = this.engine.now;
            this.busyUs += end - start;
            this.onSpan?.({ stream: this.name, name: op.name, cat: op.cat, start, end, args: op.args });
            done.fire(end);
          });
        }, this.priority);
      });
    });
    return done;
  }

  /** Signal that fires when everything queued so far has finished. */
  get idle(): Signal {
    return this.tail;
  }
}
