/**
 * FlowNetwork copy-engine slots: a transfer that finds every slot of a resource busy waits in its
 * queue and starts (alpha first) when one frees; bytes moved are counted per resource.
 * 50 GB/s = 5e4 B/us throughout.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../sim/engine.js';
import { FlowNetwork } from '../../sim/flow-network.js';

function timeline(setup: (net: FlowNetwork, e: Engine, log: [string, number][]) => void): [string, number][] {
  const e = new Engine();
  const net = new FlowNetwork(e);
  const log: [string, number][] = [];
  setup(net, e, log);
  e.run();
  return log.map(([n, t]) => [n, Math.round(t * 1e6) / 1e6]);
}

describe('FlowNetwork copy-engine slots', () => {
  it('one slot: transfers run one after another, each paying its alpha when it gets the slot', () => {
    // a 1e6 B: 0 + 5 + 20 = 25; b waits, 25 + 5 + 20 = 50; c (2e6 B) 50 + 5 + 40 = 95
    let bytes = 0;
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50, 1);
      const ids = ['a', 'b', 'c'].map((n, i) => {
        const t = net.transfer([link], i === 2 ? 2e6 : 1e6, 5, n);
        t.done.then(() => log.push([n, e.now]));
        return t.id;
      });
      expect(ids).toEqual([0, 1, 2]);
      expect(link.inUse).toBe(1);
      expect(link.queue.length).toBe(2);
      e.at(1000, () => (bytes = link.bytes));
    });
    expect(log).toEqual([['a', 25], ['b', 50], ['c', 95]]);
    expect(bytes).toBe(4e6);
  });

  it('two slots: two share the bandwidth, the third starts when the first ends', () => {
    // a, b (1e6 B each, alpha 0) share 2.5e4 B/us: both done at 40. c (1e6 B) then alone: 40 + 20 = 60
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50, 2);
      for (const n of ['a', 'b', 'c']) net.transfer([link], 1e6, 0, n).done.then(() => log.push([n, e.now]));
    });
    expect(log).toEqual([['a', 40], ['b', 40], ['c', 60]]);
  });

  it('a queued transfer waits for every resource on its route', () => {
    // x holds the only slot of port P (x: 1e6 B on P and L, 20 us); y needs P and L: starts at 20, ends at 40
    const log = timeline((net, e, log) => {
      const L = net.addResource('link', 50);
      const P = net.addResource('port', 50, 1);
      net.transfer([P, L], 1e6, 0, 'x').done.then(() => log.push(['x', e.now]));
      net.transfer([P, L], 1e6, 0, 'y').done.then(() => log.push(['y', e.now]));
    });
    expect(log).toEqual([['x', 20], ['y', 40]]);
  });

  it('a transfer queued on two resources moves to the second queue when the first frees, and starts when both do', () => {
    // long holds P's only slot (2e6 B on P: 40 us); x holds L's only slot (1e6 B: 20 us); q needs L and P.
    // at 20 x ends: q takes nothing (P is busy) and waits on P; at 40 long ends: q flows, 1e6 B -> 60
    const log = timeline((net, e, log) => {
      const L = net.addResource('link', 50, 1);
      const P = net.addResource('port', 50, 1);
      net.transfer([P], 2e6, 0, 'long').done.then(() => log.push(['long', e.now]));
      net.transfer([L], 1e6, 0, 'x').done.then(() => log.push(['x', e.now]));
      net.transfer([L, P], 1e6, 0, 'q').done.then(() => log.push(['q', e.now]));
      e.at(30, () => log.push([`L ${L.inUse}/${L.queue.length} P ${P.inUse}/${P.queue.length}`, e.now]));
    });
    expect(log).toEqual([['x', 20], ['L 0/0 P 1/1', 30], ['long', 40], ['q', 60]]);
  });

  it('an empty transfer completes after its alpha alone', () => {
    const log = timeline((net, e, log) => {
      const link = net.addResource('pcie', 50, 1);
      net.transfer([link], 0, 7, 'empty').done.then(() => log.push(['empty', e.now]));
      net.transfer([link], 1e6, 0, 'next').done.then(() => log.push(['next', e.now]));
    });
    expect(log).toEqual([['empty', 7], ['next', 27]]);
  });

  it('names an unknown resource, a duplicate and a bad bandwidth', () => {
    const net = new FlowNetwork(new Engine());
    net.addResource('pcie', 50);
    expect(net.get('pcie').name).toBe('pcie');
    expect(() => net.get('nvlink')).toThrow('unknown resource nvlink');
    expect(() => net.addResource('pcie', 50)).toThrow('resource pcie defined twice');
    expect(() => net.addResource('x', 0)).toThrow('resource x: bandwidth must be > 0 (got 0)');
  });
});
