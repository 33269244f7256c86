/**
 * What a policy that streams weights (SLEP) asks of the executor: keep only some of the model's
 * weights in HBM and copy each other layer's weights from a host tier into one of `buffers` HBM
 * layer slots just before its linear kernel. What that means for memory is sim/weight-streaming.ts.
 */
export interface WeightStreaming {
  /** host tier the streamed layers are copied from */
  tier: string;
  /** HBM layer slots for streamed layers (2 = double buffering) */
  buffers: number;
  /** bytes of one layer's weights as stored and copied (default: the preset's FP16 bytes) */
  layerBytes?: number;
  /** bytes of the weights outside the layers, resident in HBM (default: the preset's FP16 bytes) */
  otherBytes?: number;
  /** layers 0 .. residentLayers-1 stay in HBM and are never copied (default 0) */
  residentLayers?: number;
}
