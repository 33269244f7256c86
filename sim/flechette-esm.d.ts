/**
 * flechette's ES module build, by path: the package has no "exports" and its "main" is the
 * CommonJS build, which Node scans for exports on every start (about 4x slower to load than the
 * .mjs). Same code, same types.
 */
declare module '@uwdata/flechette/dist/flechette.mjs' {
  export * from '@uwdata/flechette';
}
