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
