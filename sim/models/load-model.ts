import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isPlainObject } from '../hardware/field-checks.js';
import { readJsonFile } from '../hardware/read-json-file.js';
import { deriveModel } from './derive-model.js';
import type { ModelSpec } from './model.js';
import { validateModelShape } from './model-shape.js';
import { MODEL_PRESET_DIR, MODEL_PRESET_FILES } from './model-registry.js';
import { validateModel } from './validate-model.js';

export { validateModel } from './validate-model.js';

const cache = new Map<string, ModelSpec>();

/** The model presets, in registry order. */
export function listModels(): { name: string; description: string }[] {
  return Object.keys(MODEL_PRESET_FILES).map((name) => ({ name, description: getModel(name).description }));
}

/** A model preset by name (derived from its shape and validated); each call returns a fresh copy. */
export function getModel(name: string): ModelSpec {
  let spec = cache.get(name);
  if (!spec) {
    const raw = Object.hasOwn(MODEL_PRESET_FILES, name) ? MODEL_PRESET_FILES[name] : undefined;
    if (raw === undefined) {
      throw new Error(`unknown model "${name}" (valid: ${Object.keys(MODEL_PRESET_FILES).join(', ')})`);
    }
    spec = specFrom(raw, `${MODEL_PRESET_DIR}/${name}.json`);
    cache.set(name, spec);
  }
  return structuredClone(spec);
}

/**
 * A preset name, or the path of a JSON file holding either a model shape (the preset format, with
 * `mlp`) or a full ModelSpec (with `weight_bytes_per_layer`).
 */
export function loadModel(nameOrPath: string): ModelSpec {
  if (Object.hasOwn(MODEL_PRESET_FILES, nameOrPath)) return getModel(nameOrPath);
  const path = resolve(nameOrPath);
  if (existsSync(path) && statSync(path).isFile()) return specFrom(readJsonFile(path), nameOrPath);
  throw new Error(
    `model "${nameOrPath}" is neither a preset nor a file (no file at ${path}); ` +
      `presets: ${Object.keys(MODEL_PRESET_FILES).join(', ')}`,
  );
}

function specFrom(value: unknown, source: string): ModelSpec {
  if (isPlainObject(value) && 'weight_bytes_per_layer' in value) return validateModel(value, source);
  return validateModel(deriveModel(validateModelShape(value, source)), source);
}
