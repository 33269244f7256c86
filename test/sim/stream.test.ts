import { describe, expect, it } from 'vitest';
import { Engine } from '../../sim/engine.js';
import { FlowNetwork } from '../../sim/flow-network.js';
import { Signal } from '../../sim/signal.js';
import { Stream, type TraceSpan } from '../../sim/stream.js';

function kernel(e: Engine, s: Stream, name: string, us: number, waits: Signal[] = []): Signal {
  return s.enqueue({ name, cat: 'kernel', waits, run: (finish) => e.after(us, finish, s.priority) });
}

describe('Stream', () => {
  it('runs operations in order and overlaps two streams (copy hidden under compute)', () => {
    const e = new Engine();
    const net = new FlowNetwork(e);
    const link = net.addResource('pcie', 50);
    const compute = new Stream(e, 'compute', 0);
    const memory = new Stream(e, 'memory', 1);
    const spans: TraceSpan[] = [];
    compute.onSpan = memory.onSpan = (s) => spans.push(s);
    kernel(e, compute, 'k1', 30);
    kernel(e, compute, 'k2', 30);
    // 1e6 B at 50 GB/s + 5 us = 25 us, entirely under k1
    memory.enqueue({ name: 'copy', cat: 'copy', waits: [], run: (f) => net.transfer([link], 1e6, 5).done.then(f) });
    e.run();
    expect(spans.map((s) => [s.stream, s.name, s.start, s.end])).toEqual([
      ['memory', 'copy', 0, 25],
      ['compute', 'k1', 0, 30],
      ['compute', 'k2', 30, 60],
    ]);
    expect(compute.stallUs).toBe(0);
    expect(compute.busyUs).toBe(60);
    expect(memory.busyUs).toBe(25);
  });

  it('a kernel that waits on a copy stalls the compute stream by exactly the difference', () => {
    const e = new Engine();
    const net = new FlowNetwork(e);
    const link = net.addResource('pcie', 50);
    const compute = new Stream(e, 'compute', 0);
    const memory = new Stream(e, 'memory', 1);
    const log: [string, number, number][] = [];
    compute.onSpan = memory.onSpan = (s) => log.push([s.name, s.start, s.end]);
    // copy of 2e6 B: 5 + 40 = 45 us. k1 10 us; k2 needs the copy: starts at 45 -> stall 35 us.
    const copy = memory.enqueue({ name: 'copy', cat: 'copy', waits: [], run: (f) => net.transfer([link], 2e6, 5).done.then(f) });
    kernel(e, compute, 'k1', 10);
    kernel(e, compute, 'k2', 10, [copy]);
    e.run();
    expect(log).toEqual([
      ['k1', 0, 10],
      ['copy', 0, 45],
      ['k2', 45, 55],
    ]);
    expect(compute.stallUs).toBe(35);
  });
});

describe('Stream.enqueueTimed', () => {
  // the same operations through enqueue() (a run that finishes after its duration) and through
  // enqueueTimed(): identical spans, stall and busy time, whether or not the waits have fired yet
  function scenario(timed: boolean) {
    const e = new Engine();
    const net = new FlowNetwork(e);
    const link = net.addResource('pcie', 50);
    const compute = new Stream(e, 'compute', 0);
    const memory = new Stream(e, 'memory', 1);
    const spans: [string, string, number, number][] = [];
    compute.onSpan = memory.onSpan = (s) => spans.push([s.stream, s.name, s.start, s.end]);
    const k = (name: string, us: number, waits: Signal[] = []) =>
      timed ? compute.enqueueTimed(name, 'kernel', us, waits) : kernel(e, compute, name, us, waits);
    // step 1: known start (fast path), then a kernel waiting on a copy in flight (fallback), then one after it
    k('a', 10);
    const copy = memory.enqueue({ name: 'copy', cat: 'copy', waits: [], run: (f) => net.transfer([link], 2e6, 5).done.then(f) });
    k('b', 10, [copy]);
    k('c', 7.5);
    e.run();
    // step 2, enqueued at t = 62.5 after everything finished: waits already fired; then one at t = 100
    const c2 = k('d', 3, [copy]);
    e.run(100);
    k('e', 4, [c2]);
    e.run();
    return { spans, stall: compute.stallUs, busy: compute.busyUs, now: e.now };
  }

  it('matches enqueue() exactly, on the fast path and the fallback', () => {
    const timed = scenario(true);
    expect(timed).toEqual(scenario(false));
    expect(timed.spans).toEqual([
      ['compute', 'a', 0, 10],
      ['memory', 'copy', 0, 45],
      ['compute', 'b', 45, 55],
      ['compute', 'c', 55, 62.5],
      ['compute', 'd', 62.5, 65.5],
      ['compute', 'e', 100, 104],
    ]);
    expect(timed.stall).toBe(35);
    expect(timed.busy).toBe(10 + 10 + 7.5 + 3 + 4);
  });
});
