import { describe, expect, it } from 'vitest';
import { closest, describe as show, FieldChecks } from '../../sim/hardware/field-checks.js';

describe('field checks', () => {
  it('suggests the known name a typo meant: case-insensitive match first, else at most 2 edits', () => {
    const known = ['capacity_GiB', 'read_GBps', 'write_GBps'];
    expect(closest('CAPACITY_gib', known)).toBe('capacity_GiB');
    expect(closest('read_GBs', known)).toBe('read_GBps');
    expect(closest('wirte_GBps', known)).toBe('write_GBps');
    expect(closest('bandwidth', known)).toBeUndefined();
  });

  it('shows found values as written, other things by kind', () => {
    expect([show(-3), show('x'), show(null), show(undefined), show([1]), show({}), show(true)]).toEqual([
      '-3', '"x"', 'null', 'nothing', 'an array', 'an object', 'true',
    ]);
  });

  it('checks integers, strings and choices with their paths', () => {
    const c = new FieldChecks();
    const obj = { n: 2.5, s: '', k: 'x', b: 'yes' };
    expect(c.integer(obj, 'n', 'p', 1)).toBeUndefined();
    expect(c.string(obj, 's', 'p')).toBeUndefined();
    expect(c.oneOf(obj, 'k', 'p', ['a', 'b'])).toBeUndefined();
    expect(c.boolean(obj, 'b', 'p')).toBeUndefined();
    expect(c.problems).toEqual([
      'p.n must be an integer >= 1 (got 2.5)',
      'p.s must be a non-empty string (got "")',
      'p.k must be one of a, b (got "x")',
      'p.b must be true or false (got "yes")',
    ]);
  });
});
