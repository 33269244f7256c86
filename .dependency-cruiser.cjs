/**
 * The layer map of kvtier, checked by `npm run lint:layers` (part of `npm test`). Each layer may
 * import only the layers listed before it, never one after it:
 *
 *   common/ (structures shared by every layer: lists, heaps, registries) ← traces/ (formats)
 *   ← policies/ (decide) ← sim/ (event model, hardware, models, driver, simulated
 *   executor, metrics, quality) ← serving/ (request-level simulator) ← hil/ (native addon, real
 *   executor, calibrate, compare) ← studies/ (sweeps, orchestration) ← reports/ (results to pages)
 *   ← cli/, notebooks/
 *
 * perf/, test/ and docs/ may import anything. Because every import points down, no cycle can run
 * through two layers; `no-circular` also rejects run-time cycles inside a layer's own modules.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const LAYERS = ['common', 'traces', 'policies', 'sim', 'serving', 'hil', 'studies', 'reports', ['cli', 'notebooks']];

const names = (l) => (Array.isArray(l) ? l : [l]);
const dirs = (ls) => `^(${ls.flatMap(names).join('|')})/`;

const layerRules = LAYERS.slice(0, -1).map((layer, i) => {
  const above = LAYERS.slice(i + 1);
  return {
    name: `layer-${names(layer).join('-')}`,
    comment: `${names(layer).join('/, ')}/ may import only ${i === 0 ? 'itself' : LAYERS.slice(0, i).flatMap(names).join('/, ') + '/'}; never ${above.flatMap(names).join('/, ')}/`,
    severity: 'error',
    from: { path: dirs([layer]) },
    to: { path: dirs(above) },
  };
});

// inside hil/: timing ← executor ← bench ← calibrate ← compare (each folder only the ones before it)
const HIL = ['timing', 'executor', 'bench', 'calibrate', 'compare'];
const hilRules = HIL.slice(0, -1).map((part, i) => ({
  name: `hil-${part}`,
  comment: `hil/${part}/ must not import ${HIL.slice(i + 1).map((p) => `hil/${p}/`).join(', ')}`,
  severity: 'error',
  from: { path: `^hil/${part}/` },
  to: { path: `^hil/(${HIL.slice(i + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    ...hilRules,
    {
      name: 'no-circular',
      comment: 'modules that import each other at run time (directly or through others); a cycle of type-only imports is allowed',
      severity: 'error',
      from: { path: dirs(LAYERS) },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that resolves to no file',
      severity: 'error',
      from: { path: dirs(LAYERS) },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|build|runs)/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
