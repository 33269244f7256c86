/**
 * Weight streaming (SLEP) on real bytes: the policy keeps layers 0 .. resident-1 in HBM and streams
 * every other layer's weights (layerBytes, the stored size at the policy's weight bits) from a pinned
 * host region into one of `buffers` HBM slots before its projections, as the simulator does
 * (sim/sim-executor.ts streamWeights): the i-th streamed layer to run uses slot i mod buffers; copies
 * run ahead up to buffers - 1 layers, each waiting for the projections of the layer that last used
 * its slot; the projections wait for their layer's copy. The copies go on the memory stream. The host
 * region holds at most hostLayers distinct layers (later layers reuse them round-robin: the same bytes
 * cross the link either way). With eager fences (the default) each copy's fence is recorded right behind
 * it, as an event per layer copy would be: a layer's projections never wait for a copy issued after
 * their own (the next layer's weights run ahead of them on the same stream).
 */
import type { WeightStreaming } from '../../policies/weight-streaming.js';
import { align } from './copy-runs.js';
import { type Access, COMPUTE, MEMORY, noAccess } from './fences.js';
import type { StreamedWeights } from './lowered-plan.js';
import type { LoweringContext } from './lowering-context.js';


export class WeightSlots {
  private readonly acc: Access[];
  private seq = 0;
  private issued = 0;
  readonly w: StreamedWeights;

  constructor(
    private readonly c: LoweringContext,
    ws: WeightStreaming,
    layerBytesDefault: number,
    maxHostBytes: number,
  ) {
    const layers = c.plan.initial.layers;
    const resident = Math.min(layers, ws.residentLayers ?? 0);
    const layerBytes = ws.layerBytes ?? layerBytesDefault;
    const strideBytes = align(layerBytes, 4096);
    const t = c.host.names.indexOf(ws.tier);
    if (t <= 0) throw new Error(`hil: weight streaming from tier "${ws.tier}": not a host tier of ${c.hw.name} (${c.host.names.slice(1).join(', ')})`);
    this.w = {
      buffers: ws.buffers,
      resident,
      layerBytes,
      strideBytes,
      hostLayers: Math.max(1, Math.min(layers - resident, Math.floor(maxHostBytes / strideBytes))),
      keys: c.host.pcieKeys(t, true),
    };
    this.acc = Array.from({ length: ws.buffers }, noAccess);
  }

  /** Before layer l's projections: issue the copies due, make compute wait for l's; its slot, or -1 for a resident layer. */
  beforeProjections(l: number): number {
    const { c, w } = this;
    if (l < w.resident) return -1;
    const streamed = c.plan.initial.layers - w.resident;
    const i = this.seq++;
    for (; this.issued <= i + w.buffers - 1; this.issued++) {
      const j = this.issued;
      const slot = j % w.buffers;
      const layer = w.resident + (j % streamed);
      c.touch(MEMORY, this.acc[slot]); // the projections of the layer that used this slot are done
      const m0 = c.out.mark(MEMORY);
      c.out.push({ o: 'copy', s: MEMORY, src: 'weights', srcOff: ((layer - w.resident) % w.hostLayers) * w.strideBytes, dst: 'wslots', dstOff: slot * w.strideBytes, bytes: w.layerBytes });
      c.fences.after(MEMORY, this.acc[slot]);
      // the copy's own fence, recorded right behind it: the projections that read this slot wait for
      // this copy only, not for the copies issued after it (the next layers' weights, staged KV)
      if (c.eagerFences) c.fences.recordNow(MEMORY);
      c.out.memSpans.push([m0, c.out.mark(MEMORY), `weights layer ${layer}`]);
      c.out.count(w.keys, w.layerBytes);
    }
    const slot = i % w.buffers;
    c.touch(COMPUTE, this.acc[slot]);
    return slot;
  }

  /** after the projections that read `slot` */
  afterProjections(slot: number): void {
    this.c.fences.after(COMPUTE, this.acc[slot]);
  }
}
