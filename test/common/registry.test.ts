import { describe, expect, it } from 'vitest';
import { resolveOptions, type OptionSpec } from '../../common/options.js';
import { Registry } from '../../common/registry.js';

interface Def {
  name: string;
  options: OptionSpec[];
  value: number;
}

describe('Registry', () => {
  it('keeps definitions by name in registration order, refuses duplicates unless overridden', () => {
    const r = new Registry<Def>('widget');
    r.register({ name: 'a', options: [], value: 1 });
    r.register({ name: 'b', options: [], value: 2 });
    expect(() => r.register({ name: 'a', options: [], value: 3 })).toThrow('widget "a" is already registered (pass { override: true } to replace it)');
    r.register({ name: 'a', options: [], value: 4 }, { override: true });
    expect(r.list().map((d) => [d.name, d.value])).toEqual([['a', 4], ['b', 2]]);
    expect(r.names()).toEqual(['a', 'b']);
    expect(r.get('b').value).toBe(2);
    expect(r.find('c')).toBeUndefined();
    expect(() => r.get('c')).toThrow('unknown widget "c" (valid: a, b)');
  });
});

describe('resolveOptions', () => {
  const def: Def = {
    name: 'w',
    value: 0,
    options: [
      { name: 'share', type: 'number', default: 0.1, min: 0, max: 1, description: 'a share' },
      { name: 'count', type: 'integer', default: 3, min: 1, description: 'a count' },
      { name: 'on', type: 'boolean', default: false, description: 'a switch' },
      { name: 'mode', type: 'string', default: 'x', choices: ['x', 'y'], description: 'a mode' },
    ],
  };

  it('fills defaults and types raw strings', () => {
    expect(resolveOptions('widget', def)).toEqual({ share: 0.1, count: 3, on: false, mode: 'x' });
    expect(resolveOptions('widget', def, { share: '0.25', count: '7', on: 'true', mode: 'y' })).toEqual({ share: 0.25, count: 7, on: true, mode: 'y' });
  });

  it('names the definition, the option and what is valid in every error', () => {
    expect(() => resolveOptions('widget', def, { size: 1 })).toThrow('widget w: unknown option "size" (options: share, count, on, mode)');
    expect(() => resolveOptions('widget', def, { share: 2 })).toThrow('widget w: option share must be <= 1 (got 2)');
    expect(() => resolveOptions('widget', def, { share: -1 })).toThrow('widget w: option share must be >= 0 (got -1)');
    expect(() => resolveOptions('widget', def, { share: 'lots' })).toThrow('widget w: option share must be a number (got "lots")');
    expect(() => resolveOptions('widget', def, { count: 1.5 })).toThrow('widget w: option count must be an integer (got 1.5)');
    expect(() => resolveOptions('widget', def, { on: 'maybe' })).toThrow('widget w: option on must be true or false (got "maybe")');
    expect(() => resolveOptions('widget', def, { mode: 'z' })).toThrow('widget w: option mode must be one of x, y (got "z")');
    expect(() => resolveOptions('widget', { name: 'v', options: [] }, { a: 1 })).toThrow('widget v: unknown option "a" (options: (none))');
  });
});
