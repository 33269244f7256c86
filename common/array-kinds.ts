/**
 * Arrays whose elements start at the kind they end at.
 *
 * V8 tracks what an array holds (small integers, doubles, objects; packed or with holes) in its map
 * and only widens it. An array made empty (`[]`) or by `new Array(n)` starts at small integers and
 * widens at its first object. Code compiled for the widened array then meets the narrow one in every
 * later instance of a long-lived object (a simulator per replay) and is thrown away ("wrong map");
 * an array made here has the general kind from the start, so every instance has one map.
 */

/** An empty array of objects (packed: filled by push, emptied by pop). */
export function objectArray<T>(): T[] {
  const a: unknown[] = [null];
  a.pop();
  return a as T[];
}

/** An array of `n` undefined entries, of the kind that holds objects and holes. */
export function holeyObjectArray<T>(n: number): (T | undefined)[] {
  // (a fill of no entries leaves the kind as it was: one entry filled, then taken off)
  if (n === 0) {
    const a = new Array<T | undefined>(1).fill(undefined);
    a.pop();
    return a;
  }
  return new Array<T | undefined>(n).fill(undefined);
}

/**
 * An array of `n` zeros (small integers) with a store of its own: a literal such as `[0]` shares its
 * literal's copy-on-write store until its first write, so code compiled after that write meets the
 * next instance's first write as another map.
 */
export function intArray(n: number): number[] {
  const a: number[] = [];
  for (let i = 0; i < n; i++) a.push(0);
  return a;
}

/** An array of `n` zeros held as doubles (packed), for counts that become fractional or large. */
export function doubleArray(n: number): number[] {
  const a = [0.5];
  a.pop();
  for (let i = 0; i < n; i++) a.push(0);
  return a;
}
