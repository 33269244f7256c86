import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getModel, listModels, loadModel, validateModel } from '../../sim/models/load-model.js';
import { MODEL_PRESET_FILES } from '../../sim/models/model-registry.js';

const NAMES = ['llama-2-7b', 'llama-3-8b', 'llama-3-70b', 'mistral-7b', 'opt-30b', 'deepseek-v3'];
const dir = mkdtempSync(join(tmpdir(), 'kvtier-models-'));

describe('model presets', () => {
  it('lists every preset with its description', () => {
    expect(listModels().map((m) => m.name)).toEqual(NAMES);
    for (const m of listModels()) expect(m.description).toBe(getModel(m.name).description);
  });

  it.each(NAMES)('%s derives a valid ModelSpec whose name is its preset name', (name) => {
    const m = getModel(name);
    expect(validateModel(m, name)).toBe(m);
    expect(m.name).toBe(name);
    expect(m.flops_per_token_per_layer).toBe(m.weight_bytes_per_layer); // 2 FLOPs and 2 bytes per param
    for (const k of ['weight_bytes_per_layer', 'flops_per_token_per_layer', 'other_weight_bytes', 'shape']) {
      expect(m.sources[k]).toBeTruthy();
    }
  });

  it('rejects an unknown name, listing the valid ones', () => {
    expect(() => getModel('llama-4')).toThrowError(`unknown model "llama-4" (valid: ${NAMES.join(', ')})`);
  });

  it('returns fresh copies', () => {
    getModel('llama-3-8b').layers = 1;
    expect(getModel('llama-3-8b').layers).toBe(32);
  });
});

describe('loadModel', () => {
  it('takes a preset name, a shape file, or a full ModelSpec file', () => {
    expect(loadModel('opt-30b')).toEqual(getModel('opt-30b'));
    const shapeFile = join(dir, 'shape.json');
    writeFileSync(shapeFile, JSON.stringify({ ...(MODEL_PRESET_FILES['llama-3-8b'] as object), name: 'mine' }));
    expect(loadModel(shapeFile)).toEqual({ ...getModel('llama-3-8b'), name: 'mine' });
    const specFile = join(dir, 'spec.json');
    writeFileSync(specFile, JSON.stringify(getModel('deepseek-v3')));
    expect(loadModel(specFile)).toEqual(getModel('deepseek-v3'));
  });

  it('names the file and field of a bad shape, and lists presets for a missing file', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ ...(MODEL_PRESET_FILES['llama-3-8b'] as object), kv_heads: 7 }));
    expect(() => loadModel(bad)).toThrowError(
      `${bad}: kv_heads must divide q_heads = 32 and be smaller for attention "gqa" (got 7)`,
    );
    expect(() => loadModel(join(dir, 'nope.json'))).toThrowError(`presets: ${NAMES.join(', ')}`);
  });
});
