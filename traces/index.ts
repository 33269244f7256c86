/** Attention traces: the .kvt format (FORMAT.md), its writer and streaming reader, the generator, statistics. */
export * from './format.js';
export { TraceWriter, type TraceWriterOptions } from './trace-writer.js';
export { TraceReader, openTrace, readTraceHeader, type TraceReaderOptions } from './trace-reader.js';
export { validateTrace, type TraceValidation } from './validate-trace.js';
export { cloneStep } from './clone-step.js';
export { DEFAULT_MASS_TOLERANCE, type StepCheckOptions } from './step-check.js';
export { generateSteps, generateTrace, generatedHeader, GENERATOR_NAME, GENERATOR_VERSION } from './generator.js';
export {
  AUTO_DENSE_MAX_BLOCKS,
  DEFAULT_GENERATOR_PARAMS,
  PRESETS,
  PRESET_NAMES,
  needleBlock,
  resolveGeneratorParams,
  type GeneratorInput,
  type GeneratorParams,
  type NeedleParams,
  type PresetName,
} from './generator-params.js';
export { computeTraceStats, formatTraceStats, type LayerStats, type TraceStats, type TraceStatsOptions } from './trace-stats.js';
export { BUNDLED_TRACES, type BundledTrace } from './bundled-traces.js';
