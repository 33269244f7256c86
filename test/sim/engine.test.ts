import { describe, expect, it } from 'vitest';
import { Engine } from '../../sim/engine.js';

describe('Engine', () => {
  it('runs events in (time, priority, sequence) order as an exact timeline', () => {
    const e = new Engine(2);
    const log: [string, number][] = [];
    const rec = (name: string) => () => log.push([name, e.now]);
    e.at(5, rec('c'));
    e.at(1, rec('b-low'), 1);
    e.at(1, rec('a-high'), 0);
    e.at(1, rec('b-low-2'), 1);
    e.at(0, () => {
      log.push(['start', e.now]);
      e.after(3, rec('scheduled-inside'));
    });
    expect(e.run()).toBe(6);
    expect(log).toEqual([
      ['start', 0],
      ['a-high', 1],
      ['b-low', 1],
      ['b-low-2', 1],
      ['scheduled-inside', 3],
      ['c', 5],
    ]);
  });

  it('stops at `until` and resumes', () => {
    const e = new Engine();
    const log: number[] = [];
    for (const t of [1, 2, 3, 4]) e.at(t, () => log.push(t));
    e.run(2.5);
    expect(log).toEqual([1, 2]);
    expect(e.now).toBe(2.5);
    expect(e.pending).toBe(2);
    e.run();
    expect(log).toEqual([1, 2, 3, 4]);
  });

  it('refuses events in the past', () => {
    const e = new Engine();
    e.at(10, () => undefined);
    e.run();
    expect(() => e.at(5, () => undefined)).toThrow(/before now/);
    expect(() => e.at(Number.NaN, () => undefined)).toThrow(RangeError);
  });

  it('orders a large random schedule like a stable sort on (time, priority)', () => {
    const e = new Engine(4);
    let x = 12345;
    const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const items: { t: number; p: number; i: number }[] = [];
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const it = { t: Math.floor(rnd() * 100), p: Math.floor(rnd() * 3), i };
      items.push(it);
      e.at(it.t, () => out.push(i), it.p);
    }
    e.run();
    const expected = [...items].sort((a, b) => a.t - b.t || a.p - b.p || a.i - b.i).map((it) => it.i);
    expect(out).toEqual(expected);
  });
});

describe('Engine priorities', () => {
  it('refuses a priority the event heap cannot hold exactly', () => {
    const e = new Engine();
    expect(() => e.at(1, () => {}, 0.5)).toThrow('Engine.at: priority 0.5: expected a 32-bit integer');
    expect(() => e.at(1, () => {}, 2 ** 31)).toThrow(/32-bit integer/);
    const log: number[] = [];
    e.at(1, () => log.push(2), 2);
    e.at(1, () => log.push(-1), -1);
    e.run();
    expect(log).toEqual([-1, 2]);
  });
});
