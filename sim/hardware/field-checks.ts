/**
 * A small hand-written schema checker shared by the hardware and model validators. It collects
 * problems (never throws) so one run reports every mistake; each message names the field path,
 * what was expected, and what was found.
 */
export type NumberRule = '>0' | '>=0';

export class FieldChecks {
  readonly problems: string[] = [];

  add(problem: string): void {
    this.problems.push(problem);
  }

  /**
   * `value` must be a plain object holding exactly `required` (plus any of `optional`). Returns it for
   * field checks, or undefined when it is not an object at all.
   */
  object(
    value: unknown,
    path: string,
    required: readonly string[],
    optional: readonly string[] = [],
  ): Record<string, unknown> | undefined {
    if (!isPlainObject(value)) {
      this.add(`${path || 'the top level'} must be an object (got ${describe(value)})`);
      return undefined;
    }
    const known = [...required, ...optional];
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) {
        const hint = closest(key, known);
        this.add(
          `${join(path, key)} is not a known field${hint ? ` (did you mean "${hint}"?)` : ''}` +
            ` (fields: ${known.join(', ')})`,
        );
      }
    }
    for (const key of required) {
      if (!(key in value)) this.add(`${join(path, key)} is missing`);
    }
    return value;
  }

  /** A finite number, > 0 or >= 0 by `rule`; undefined when absent (absence is reported by object()). */
  number(obj: Record<string, unknown>, key: string, path: string, rule: NumberRule = '>0'): number | undefined {
    if (!(key in obj)) return undefined;
    const v = obj[key];
    const ok = typeof v === 'number' && Number.isFinite(v) && (rule === '>0' ? v > 0 : v >= 0);
    if (!ok) {
      this.add(`${join(path, key)} must be a number ${rule === '>0' ? '> 0' : '>= 0'} (got ${describe(v)})`);
      return undefined;
    }
    return v as number;
  }

  /** An integer >= min. */
  integer(obj: Record<string, unknown>, key: string, path: string, min = 1): number | undefined {
    if (!(key in obj)) return undefined;
    const v = obj[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
      this.add(`${join(path, key)} must be an integer >= ${min} (got ${describe(v)})`);
      return undefined;
    }
    return v;
  }

  /** A string; non-empty unless `allowEmpty`. */
  string(obj: Record<string, unknown>, key: string, path: string, allowEmpty = false): string | undefined {
    if (!(key in obj)) return undefined;
    const v = obj[key];
    if (typeof v !== 'string' || (!allowEmpty && v.length === 0)) {
      this.add(`${join(path, key)} must be a ${allowEmpty ? '' : 'non-empty '}string (got ${describe(v)})`);
      return undefined;
    }
    return v;
  }

  boolean(obj: Record<string, unknown>, key: string, path: string): boolean | undefined {
    if (!(key in obj)) return undefined;
    const v = obj[key];
    if (typeof v !== 'boolean') {
      this.add(`${join(path, key)} must be true or false (got ${describe(v)})`);
      return undefined;
    }
    return v;
  }

  /** One of `choices` (strings). */
  oneOf<T extends string>(obj: Record<string, unknown>, key: string, path: string, choices: readonly T[]): T | undefined {
    if (!(key in obj)) return undefined;
    const v = obj[key];
    if (typeof v !== 'string' || !(choices as readonly string[]).includes(v)) {
      this.add(`${join(path, key)} must be one of ${choices.join(', ')} (got ${describe(v)})`);
      return undefined;
    }
    return v as T;
  }

  /** An array, non-empty unless `allowEmpty`; returns it or undefined. */
  array(obj: Record<string, unknown>, key: string, path: string, allowEmpty = false): unknown[] | undefined {
    if (!(key in obj)) return undefined;
    const v = obj[key];
    if (!Array.isArray(v)) {
      this.add(`${join(path, key)} must be an array (got ${describe(v)})`);
      return undefined;
    }
    if (v.length === 0 && !allowEmpty) {
      this.add(`${join(path, key)} must not be empty`);
      return undefined;
    }
    return v;
  }

  /** A map from string to string (the `sources` maps). */
  stringMap(obj: Record<string, unknown>, key: string, path: string): Record<string, string> | undefined {
    if (!(key in obj)) return undefined;
    const v = obj[key];
    const p = join(path, key);
    if (!isPlainObject(v)) {
      this.add(`${p} must be an object of "field path": "source" strings (got ${describe(v)})`);
      return undefined;
    }
    let ok = true;
    for (const [k, s] of Object.entries(v)) {
      if (typeof s !== 'string' || s.length === 0) {
        this.add(`${p}["${k}"] must be a non-empty string (got ${describe(s)})`);
        ok = false;
      }
    }
    return ok ? (v as Record<string, string>) : undefined;
  }
}

/** `a` + `.b` (or just `b` at the top level). */
export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** How a found value is shown in a message: numbers and strings as written, others by kind. */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** The known name a typo most likely meant: same letters ignoring case, or at most 2 edits away. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    if (k.toLowerCase() === lower) return k;
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
