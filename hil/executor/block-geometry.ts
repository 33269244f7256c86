/** A model's KV block geometry for the HIL kernels (MHA/GQA only). */
import type { ModelSpec } from '../../sim/models/model.js';
import type { BlockGeometry } from '../kv-format.js';

export function geometryOf(model: ModelSpec, blockTokens: number, groupSize: number): BlockGeometry {
  if (model.attention === 'mla') throw new Error(`hil: model ${model.name} uses MLA; the HIL attention kernel supports MHA/GQA only`);
  if (model.head_dim % groupSize !== 0) throw new Error(`hil: --group-size ${groupSize} must divide head_dim ${model.head_dim}`);
  return { kvHeads: model.kv_heads, blockTokens, headDim: model.head_dim, groupSize };
}
