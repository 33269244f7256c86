/**
 * One layer's compute: free the slots of dropped blocks, give created blocks slab slots, find where
 * the attention reads each attended block (its slab slot, its staged copy, or a fetch into the ring
 * now), then on the compute stream: mark, wait for the memory stream, append the new KV, attention
 * over a block table, release the ring extents it read, projections (and the LM head after the last
 * layer), mark.
 */
import { PREC_CODE } from './block-tables.js';
import { type Access, COMPUTE } from './fences.js';
import type { LayerMarks } from './lowered-plan.js';
import type { LoweringContext } from './lowering-context.js';
import { toStaging } from './lower-staging.js';
import type { PlannedLayer } from './plan.js';

export function lowerLayer(c: LoweringContext, w: PlannedLayer): LayerMarks {
  const l = w.layer;
  const { places: p, out } = c;
  for (const b of w.dropped) {
    const off = p.slot[p.ix(l, b)];
    if (off >= 0) c.slabs.free(off);
    p.slot[p.ix(l, b)] = -1;
    p.tier[p.ix(l, b)] = -2;
  }
  const created: [number, number][] = [];
  for (const b of w.created) {
    const s = c.slabs.alloc(c.fp16Bytes, l);
    p.slot[p.ix(l, b)] = s.offset;
    p.set(l, b, 0, 16);
    created.push([c.fresh.offset(l, b), s.offset]);
  }
  // where the kernel reads each attended block
  const n = w.attended.length;
  const entries = new Float64Array(n);
  const prec = new Int32Array(n);
  const reads: Access[] = [];
  const fetch = new Map<number, { blocks: number[]; bits: number[]; at: number[] }>();
  for (let i = 0; i < n; i++) {
    const b = w.attended[i];
    const t = p.tier[p.ix(l, b)];
    const bits = p.bits[p.ix(l, b)];
    prec[i] = PREC_CODE[bits];
    if (t === 0) {
      entries[i] = p.slot[p.ix(l, b)];
      reads.push(c.slabs.access(entries[i]));
      continue;
    }
    const st = c.staged[l].get(b);
    if (st && st.tier === t && st.bits === bits) {
      entries[i] = st.offset;
      continue;
    }
    let f = fetch.get(t);
    if (!f) fetch.set(t, (f = { blocks: [], bits: [], at: [] }));
    f.blocks.push(b);
    f.bits.push(bits);
    f.at.push(i);
  }
  const fetchExtents: number[] = [];
  for (const [t, f] of fetch) {
    const { offset, offsets } = toStaging(c, l, t, f.blocks, f.bits, 'fetch');
    fetchExtents.push(offset);
    f.at.forEach((i, k) => (entries[i] = offsets[k]));
  }
  const extents = [...c.stagedExtents[l], ...fetchExtents];
  // compute stream: reach, wait for memory, append new KV, attention, projections
  const pre = out.mark(COMPUTE);
  for (const acc of reads) c.touch(COMPUTE, acc);
  for (const e of extents) c.touch(COMPUTE, c.extAcc.get(e)!);
  for (const [, off] of created) c.touch(COMPUTE, c.slabs.access(off));
  const ready = out.mark(COMPUTE);
  for (const [src, dst] of created) {
    out.push({ o: 'copy', s: COMPUTE, src: 'fresh', srcOff: src, dst: 'arena', dstOff: dst, bytes: c.fp16Bytes });
    c.fences.after(COMPUTE, c.slabs.access(dst));
    // RotateKV: the new token's K/V rotated as it is stored
    if (c.rotation) out.push({ o: 'rotate', s: COMPUTE, what: 'block', region: 'arena', offset: dst });
  }
  const tableOff = c.tables.write(entries, prec);
  let uniform = n > 0 ? p.bits[p.ix(l, w.attended[0])] : 0;
  for (let i = 1; i < n && uniform !== 0; i++) if (p.bits[p.ix(l, w.attended[i])] !== uniform) uniform = 0;
  if (c.rotation) out.push({ o: 'rotate', s: COMPUTE, what: 'q' });
  out.push({ o: 'attn', layer: l, tableOff, tokens: w.tokens, uniform });
  if (c.rotation) out.push({ o: 'rotate', s: COMPUTE, what: 'out' });
  const attn = out.mark(COMPUTE);
  for (const acc of reads) c.fences.after(COMPUTE, acc);
  for (const e of extents) {
    c.fences.after(COMPUTE, c.extAcc.get(e)!);
    c.ring.release(e);
    c.extAcc.delete(e);
  }
  if (c.eagerFences && extents.length) c.fences.recordNow(COMPUTE);
  c.stagedExtents[l] = [];
  c.staged[l].clear();
  const slot = c.weights ? c.weights.beforeProjections(l) : -1;
  out.push({ o: 'gemv', layer: l, lmHead: false, ...(slot >= 0 ? { slot } : {}) });
  if (slot >= 0) c.weights!.afterProjections(slot);
  if (l === c.plan.initial.layers - 1) out.push({ o: 'gemv', layer: l, lmHead: true });
  const done = out.mark(COMPUTE);
  return { layer: l, pre, ready, attn, done };
}
