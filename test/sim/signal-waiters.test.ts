/**
 * A signal's waiters (functions and event tasks, any number of them) run when it fires, once each, in
 * the order they were added; one added after it fired runs at once. The first two are held without an
 * array, the others in one: every count from 0 to 6 is checked.
 */
import { describe, expect, it } from 'vitest';
import { Signal } from '../../sim/signal.js';

describe('signal waiters', () => {
  it('run once each, in the order added, for 0..6 waiters of both kinds; later ones at once', () => {
    for (let n = 0; n <= 6; n++) {
      for (const kinds of [0, 0b1010101, 0b0110011, 0b1111111]) {
        const s = new Signal();
        const ran: number[] = [];
        for (let i = 0; i < n; i++) {
          if ((kinds >> i) & 1) s.then({ run: () => ran.push(i) });
          else s.then(() => ran.push(i));
        }
        expect(ran).toEqual([]);
        s.fire(5);
        expect(s.done).toBe(true);
        expect(s.at).toBe(5);
        expect(ran).toEqual(Array.from({ length: n }, (_, i) => i));
        s.then(() => ran.push(100));
        s.then({ run: () => ran.push(101) });
        expect(ran.slice(n)).toEqual([100, 101]);
      }
    }
  });

  it('a waiter that adds a waiter to another signal, or fires it, runs before the waiters added after it', () => {
    const a = new Signal();
    const b = new Signal();
    const ran: string[] = [];
    a.then(() => ran.push('a1'));
    a.then(() => {
      ran.push('a2');
      b.fire(1);
    });
    b.then(() => ran.push('b1'));
    a.then(() => ran.push('a3'));
    a.then(() => ran.push('a4'));
    a.fire(1);
    expect(ran).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  });
});
