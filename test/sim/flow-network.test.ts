import { describe, expect, it } from 'vitest';
import { Engine } from '../../sim/engine.js';
import { FlowNetwork } from '../../sim/flow-network.js';

function timeline(setup: (net: FlowNetwork, e: Engine, log: [string, number][]) => void): [string, number][] {
  const e = new Engine();
  const net = new FlowNetwork(e);
  const log: [string, number][] = [];
  setup(net, e, log);
  e.run();
  return log;
}

describe('FlowNetwork (alpha-beta links, shared bandwidth)', () => {
  it('one transfer takes alpha + bytes / beta', () => {
    // 50 GB/s = 5e4 B/us; 1e6 B -> 20 us; alpha 5 us
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50);
      net.transfer([link], 1e6, 5).done.then(() => log.push(['a', e.now]));
    });
    expect(log).toEqual([['a', 25]]);
  });

  it('two concurrent transfers share the link equally, then the survivor speeds up', () => {
    // a: 1e6 B, b: 2e6 B, both start at 0 with alpha 0 on 50 GB/s.
    // shared 25e3 B/us each: a done at 40 us (b has 1e6 left); b alone at 5e4: +20 us -> 60 us.
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50);
      net.transfer([link], 1e6, 0).done.then(() => log.push(['a', e.now]));
      net.transfer([link], 2e6, 0).done.then(() => log.push(['b', e.now]));
    });
    expect(log).toEqual([['a', 40], ['b', 60]]);
  });

  it('a late arrival slows the running transfer from the moment it starts moving bytes', () => {
    // a: 2e6 B from t=0 alone at 5e4 B/us. b: 1e6 B issued at t=10 with alpha 10 -> flows from t=20.
    // at t=20 a has 1e6 left; both at 25e3: b and a both finish at t=60.
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50);
      net.transfer([link], 2e6, 0).done.then(() => log.push(['a', e.now]));
      e.at(10, () => net.transfer([link], 1e6, 10).done.then(() => log.push(['b', e.now])));
    });
    expect(log.map(([n, t]) => [n, Math.round(t * 1e6) / 1e6])).toEqual([['a', 60], ['b', 60]]);
  });

  it('max-min fairness across resources: a bottlenecked flow leaves its share to the other', () => {
    // x uses link L (100 GB/s) and slow port S (10 GB/s); y uses only L.
    // fair: x limited to 10e3 by S, y gets the remaining 90e3 on L.
    // x: 1e6 B -> 100 us. y: 1.8e6 B -> 20 us, then x alone still capped at 1e4 -> x at 100 us.
    const log = timeline((net, e, log) => {
      const L = net.addResource('L', 100);
      const S = net.addResource('S', 10);
      net.transfer([L, S], 1e6, 0).done.then(() => log.push(['x', e.now]));
      net.transfer([L], 1.8e6, 0).done.then(() => log.push(['y', e.now]));
    });
    expect(log).toEqual([['y', 20], ['x', 100]]);
  });

  it('full duplex: opposite directions are separate resources and do not slow each other', () => {
    const log = timeline((net, e, log) => {
      const h2d = net.addResource('pcie:dram->hbm', 50);
      const d2h = net.addResource('pcie:hbm->dram', 50);
      net.transfer([h2d], 1e6, 5).done.then(() => log.push(['h2d', e.now]));
      net.transfer([d2h], 1e6, 5).done.then(() => log.push(['d2h', e.now]));
    });
    expect(log).toEqual([['h2d', 25], ['d2h', 25]]);
  });

  it('copy engines limit transfers in flight; the rest wait in FIFO order', () => {
    // one engine: a (1e6) runs 0..25, b starts at 25 (alpha 5) and ends at 50, c at 75.
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50, 1);
      for (const name of ['a', 'b', 'c']) net.transfer([link], 1e6, 5).done.then(() => log.push([name, e.now]));
    });
    expect(log).toEqual([['a', 25], ['b', 50], ['c', 75]]);
  });

  it('counts bytes per resource', () => {
    const e = new Engine();
    const net = new FlowNetwork(e);
    const a = net.addResource('a', 10);
    const b = net.addResource('b', 10);
    net.transfer([a, b], 300, 0);
    net.transfer([a], 200, 1);
    e.run();
    expect(a.bytes).toBe(500);
    expect(b.bytes).toBe(300);
  });

  it('rejects non-positive bandwidth and duplicate names', () => {
    const net = new FlowNetwork(new Engine());
    expect(() => net.addResource('x', 0)).toThrow(/bandwidth must be > 0/);
    net.addResource('y', 1);
    expect(() => net.addResource('y', 1)).toThrow(/defined twice/);
  });
});

describe('FlowNetwork properties over generated transfers', () => {
  it('every transfer finishes, bytes are conserved, none beats alpha + bytes/capacity, the link is never oversubscribed', () => {
    let x = 7;
    const rnd = () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    for (let trial = 0; trial < 20; trial++) {
      const e = new Engine();
      const net = new FlowNetwork(e);
      const link = net.addResource('pcie', 53.08, 1 + Math.floor(rnd() * 3));
      const port = net.addResource('nvme', 6.9);
      let total = 0;
      const ends: { start: number; min: number; end: number }[] = [];
      for (let i = 0; i < 40; i++) {
        const at = rnd() * 500;
        const bytes = Math.floor(1 + rnd() * 3e6);
        const viaPort = rnd() < 0.3;
        total += bytes;
        e.at(at, () => {
          const cap = viaPort ? 6.9e3 : 53.08e3;
          const rec = { start: e.now, min: 3.3 + bytes / cap, end: Number.NaN };
          ends.push(rec);
          net.transfer(viaPort ? [link, port] : [link], bytes, 3.3).done.then(() => (rec.end = e.now));
        });
      }
      e.run();
      expect(ends.every((r) => Number.isFinite(r.end))).toBe(true);
      for (const r of ends) expect(r.end - r.start).toBeGreaterThanOrEqual(r.min - 1e-6);
      expect(link.bytes).toBe(total);
      // the link moved every byte no faster than its capacity over the busy period
      const first = Math.min(...ends.map((r) => r.start));
      const last = Math.max(...ends.map((r) => r.end));
      expect(total / (last - first)).toBeLessThanOrEqual(53.08e3 + 1e-6);
    }
  });
});

describe('FlowNetwork at large simulated times', () => {
  it('finishes a transfer whose remaining time is below the clock resolution (no livelock)', () => {
    const e = new Engine();
    const net = new FlowNetwork(e);
    const link = net.addResource('pcie', 54.26);
    let done = 0;
    // far into a long simulation the clock's resolution is coarse; rate changes leave residues
    e.at(6.2e10, () => {
      for (let i = 0; i < 3; i++) e.after(i * 0.37, () => net.transfer([link], 67_108_864 + i * 12_345, 3.29).done.then(() => done++));
    });
    const events = e.run();
    expect(done).toBe(3);
    expect(events).toBeLessThan(100);
  });

  it('send(): the sink is called at the times transfer()\'s signal fires; one done at once is reported within the send() call', () => {
    // the shared-link case above through send(): a at 40 us, b at 60 us; c (0 B, alpha 0) completes
    // at once, before the log entry made after the call
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50);
      const sink = (name: string) => ({ flowDone: () => log.push([name, e.now]) });
      net.send([link], 1e6, 0, sink('a'));
      net.send([link], 2e6, 0, sink('b'));
      net.send([link], 0, 0, sink('c'));
      log.push(['after c', e.now]);
    });
    expect(log).toEqual([['c', 0], ['after c', 0], ['a', 40], ['b', 60]]);
  });
});
