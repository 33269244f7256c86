/** Byte alignment and copy coalescing, as the executor lays out and issues its copies. */
export const align = (n: number, a: number): number => Math.ceil(n / a) * a;

/** (src, dst, bytes) copies in order, merged where source and destination both continue the previous copy */
export function coalesceCopies(list: readonly (readonly [number, number, number])[]): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (const [s, d, n] of list) {
    const cur = out[out.length - 1];
    if (cur && s === cur[0] + cur[2] && d === cur[1] + cur[2]) cur[2] += n;
    else out.push([s, d, n]);
  }
  return out;
}
