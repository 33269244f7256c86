/** The model presets' public API: types, presets, derivation from published shapes, KV sizes. */
export * from './model.js';
export { listModels, getModel, loadModel, validateModel } from './load-model.js';
export { validateModelShape, type ModelShape } from './model-shape.js';
export { deriveModel, layerParams, otherParams, type LayerParams } from './derive-model.js';
export { kvBytesPerToken } from './kv-bytes-per-token.js';
