import { InvalidArgumentError } from 'commander';
/** Repeated `--opt key=value` flags into an object; values stay strings (typed later by their owner). */
export function collectPair(value: string, prev: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new Error(`expected key=value, got "${value}"`);
  return { ...prev, [value.slice(0, eq).trim()]: value.slice(eq + 1).trim() };
}

/** A non-negative integer flag, with an error naming the flag. */
export function intFlag(flag: string, min = 0) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min) throw new Error(`${flag} must be an integer >= ${min} (got "${value}")`);
    return n;
  };
}

/** A flag parser whose Error becomes commander's InvalidArgumentError (same message). */
export function argParser<T>(f: (v: string) => T) {
  return (v: string): T => {
    try {
      return f(v);
    } catch (e) {
      throw new InvalidArgumentError((e as Error).message);
    }
  };
}
