// A copy on the memory stream hidden under attention on the compute stream.
// masking efficiency = 1 - stall / transfer, stall = (time of both) - (time of compute alone).
//
// Each trial starts behind a gate (gate.ts): GEMVs on the compute stream, sized from the host's
// enqueue time, then its start event; the memory stream waits for it. So every copy and every
// attention call of the trial is queued before either stream starts, and neither the host's launch
// rate nor the order the host queues the two streams in is timed. Without it, queuing the copies
// after the attention started them late (4k: past the compute, 72-75% masking on the H100), and
// queuing them first held the attention back by the copies' enqueue time (84-89%). The row says in
// how many trials the gate held (lasted at least the trial's host enqueue time, its own launches
// included); where it did not, the last calls queued after the start event may have started late.
import type { NativeBackend } from '../addon-types.js';
import { openCopyRig } from './copy-rig.js';
import { ComputeGate } from './gate.js';
import { EventSet } from '../timing/event-set.js';
import { median } from '../timing/median.js';

export interface OverlapRow {
  computeMs: number;
  copyMs: number;
  bothMs: number;
  computeWhileCopyingMs: number;
  /** the copies' end in the trial with both, from the gate end (ms): slowed by the compute? */
  copyWhileComputingMs: number;
  copyBytes: number;
  maskingEfficiency: number;
  /** host time to enqueue one trial, the gate's launches included, max over trials (ms) */
  enqueueMs: number;
  /** device time of the gate, min over trials (ms) */
  gateMs: number;
  /** trials (3 per trial round) whose gate lasted at least their enqueue time: everything was queued before the gate's start event */
  gateHeld: number;
  gateTrials: number;
}

export interface OverlapOptions {
  contextTokens: number;
  attnRepeat: number;
  slabBytes: number;
  slabs: number;
  /** 'h2d' (default): pinned host -> HBM, the copy writes HBM; 'd2h': HBM -> pinned host, it reads HBM */
  direction?: 'h2d' | 'd2h';
  /** declare the table uniform FP16 (the tensor-core FP16 kernel on cuda) instead of no promise (v3) */
  uniformFp16?: boolean;
}

export async function benchOverlap(b: NativeBackend, opts: OverlapOptions, trials = 5): Promise<OverlapRow> {
  const rig = openCopyRig(b, { contextTokens: opts.contextTokens, copyBytes: opts.slabBytes * opts.slabs, direction: opts.direction, uniformFp16: opts.uniformFp16 });
  const events = new EventSet(b);
  let gt: ComputeGate | undefined;
  try {
    gt = await ComputeGate.open(b);
    const gate = gt;
    const [eA, eB] = [events.make(), events.make()];
    const attn = () => b.attention('compute', rig.op, opts.attnRepeat);
    const copies = () => {
      for (let i = 0; i < opts.slabs; i++) b.copy('memory', rig.dst, i * opts.slabBytes, rig.src, i * opts.slabBytes, opts.slabBytes);
    };
    const run = async (withAttn: boolean, withCopy: boolean) => {
      const g = await gate.trial(`overlap:${withAttn}${withCopy}`, () => {
        b.waitEvent('memory', gate.start);
        if (withAttn) attn();
        if (withCopy) copies();
        b.record('compute', eA);
        b.record('memory', eB);
      });
      return { a: b.elapsedMs(gate.start, eA), c: b.elapsedMs(gate.start, eB), enq: g.enqueueMs, gate: g.gateMs, held: g.held };
    };
    // warm-up: sizes the gates from each kind's enqueue time and the gate's own GEMV time
    await run(true, true);
    await run(true, true);
    await run(true, false);
    await run(false, true);
    const compute: number[] = [], copy: number[] = [], both: number[] = [], computeBoth: number[] = [], copyBoth: number[] = [], enq: number[] = [], gates: number[] = [];
    let held = 0;
    const note = (r: { enq: number; gate: number; held: boolean }) => {
      enq.push(r.enq);
      gates.push(r.gate);
      if (r.held) held++;
    };
    for (let t = 0; t < trials; t++) {
      const a = await run(true, false);
      compute.push(a.a);
      const c = await run(false, true);
      copy.push(c.c);
      const r = await run(true, true);
      both.push(Math.max(r.a, r.c));
      computeBoth.push(r.a);
      copyBoth.push(r.c);
      for (const x of [a, c, r]) note(x);
    }
    const computeMs = median(compute), copyMs = median(copy), bothMs = median(both);
    const stall = Math.max(0, bothMs - computeMs);
    return {
      computeMs,
      copyMs,
      bothMs,
      computeWhileCopyingMs: median(computeBoth),
      copyWhileComputingMs: median(copyBoth),
      copyBytes: opts.slabBytes * opts.slabs,
      maskingEfficiency: Math.max(0, Math.min(1, 1 - stall / copyMs)),
      enqueueMs: Math.max(...enq),
      gateMs: Math.min(...gates),
      gateHeld: held,
      gateTrials: gates.length,
    };
  } finally {
    try {
      await b.synchronize(); // nothing queued may still use what is freed
    } finally {
      events.destroyAll();
      gt?.free();
      rig.free();
    }
  }
}
