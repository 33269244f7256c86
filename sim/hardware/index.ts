/** The hardware model's public API: profile types, validation, presets, link fitting. */
export * from './profile.js';
export { validateProfile, PROFILE_SCHEMA } from './validate-profile.js';
export { ValidationError } from './validation-error.js';
export { listHardware, loadHardware, resolveMachine, gpuPreset, tierPreset } from './load-profile.js';
export { checkSources } from './check-sources.js';
export { fitLinkLeastSquares, fitLinkMinimax, linkTimeUs, maxRelError, type CopyPoint, type LinkFit } from './fit-link.js';
export { readJsonFile } from './read-json-file.js';
