/**
 * The shipped model shapes, imported as JSON modules so `tsc` copies them into dist/.
 * A new model is one JSON file in presets/ plus one line here.
 */
import deepseekV3 from './presets/deepseek-v3.json' with { type: 'json' };
import llama27b from './presets/llama-2-7b.json' with { type: 'json' };
import llama370b from './presets/llama-3-70b.json' with { type: 'json' };
import llama38b from './presets/llama-3-8b.json' with { type: 'json' };
import mistral7b from './presets/mistral-7b.json' with { type: 'json' };
import opt30b from './presets/opt-30b.json' with { type: 'json' };

/** preset name (= file name without .json) -> parsed, not yet validated shape */
export const MODEL_PRESET_FILES: Readonly<Record<string, unknown>> = {
  'llama-2-7b': llama27b,
  'llama-3-8b': llama38b,
  'llama-3-70b': llama370b,
  'mistral-7b': mistral7b,
  'opt-30b': opt30b,
  'deepseek-v3': deepseekV3,
};

export const MODEL_PRESET_DIR = 'sim/models/presets';
