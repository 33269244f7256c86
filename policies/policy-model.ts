/**
 * The model numbers a policy may read, as plain numbers (the simulator's ModelSpec, sim/models/model.ts,
 * carries them and more).
 */
export interface PolicyModel {
  readonly name: string;
  readonly layers: number;
  readonly kv_heads: number;
  readonly head_dim: number;
  /** FP16/BF16 bytes of the weights of one transformer layer */
  readonly weight_bytes_per_layer: number;
  /** FP16 bytes of the weights outside the layers (embeddings, LM head) */
  readonly other_weight_bytes: number;
}
