/**
 * Weight streaming (SLEP): a policy may ask the executor to keep only some of the model's weights in
 * HBM and copy each other layer's weights from a host tier into one of `buffers` HBM layer slots
 * just before its linear kernel (the request: policies/weight-streaming.ts). This file holds what
 * that means for memory: the weight bytes that
 * stay resident in HBM, which the HBM check subtracts instead of the whole model, and the bytes the
 * streaming tier holds, which the KV cannot use there.
 */
import type { WeightStreaming } from '../policies/weight-streaming.js';
import type { ModelSpec } from './models/model.js';

export type { WeightStreaming };

/** Weight bytes held in HBM during decode: every layer without streaming; else resident layers + slots + non-layer weights. */
export function hbmWeightBytes(m: ModelSpec, ws?: WeightStreaming): number {
  if (!ws) return m.layers * m.weight_bytes_per_layer + m.other_weight_bytes;
  const layer = ws.layerBytes ?? m.weight_bytes_per_layer;
  const resident = Math.min(m.layers, ws.residentLayers ?? 0);
  const slots = Math.min(ws.buffers, m.layers - resident);
  return (resident + slots) * layer + (ws.otherBytes ?? m.other_weight_bytes);
}

/** Weight bytes held in the streaming tier (the layers not resident in HBM); 0 without streaming. */
export function hostWeightBytes(m: ModelSpec, ws?: WeightStreaming): number {
  if (!ws) return 0;
  return (m.layers - Math.min(m.layers, ws.residentLayers ?? 0)) * (ws.layerBytes ?? m.weight_bytes_per_layer);
}

/** How the HBM weight bytes add up, for error messages. */
export function describeHbmWeights(m: ModelSpec, ws: WeightStreaming | undefined, fmt: (bytes: number) => string): string {
  if (!ws) return `${fmt(hbmWeightBytes(m))} weights of ${m.name}`;
  const layer = ws.layerBytes ?? m.weight_bytes_per_layer;
  const resident = Math.min(m.layers, ws.residentLayers ?? 0);
  const slots = Math.min(ws.buffers, m.layers - resident);
  return (
    `${fmt(hbmWeightBytes(m, ws))} weights of ${m.name} (${resident} resident layers + ${slots} streaming slots of ${fmt(layer)}, ` +
    `+ ${fmt(ws.otherBytes ?? m.other_weight_bytes)} outside the layers)`
  );
}
