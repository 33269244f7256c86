// Seeded random numbers for tests, benchmarks and quality runs (mulberry32 + Box-Muller).
// Dependency-free so compiled hil/ code runs where no node_modules exist (the GPU machine).

export interface Rng {
  next(): number;
  normal(): number;
  int(lo: number, hi: number): number;
}

export function makeRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    normal: () => {
      const u = Math.max(next(), 1e-12);
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
    },
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
  };
}
