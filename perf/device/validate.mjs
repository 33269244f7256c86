// On the GPU machine (plain node, compiled JS): `kvtier hil validate` without the CLI: the grid file,
// calibration per model at held-out contexts, every cell simulated and run on the cuda backend,
// validate.json and cells.csv under OUTDIR (the report page is rendered here, on the dev machine:
// kvtier hil validate-report OUTDIR). A rerun with the same OUTDIR reuses finished cells and profiles.
//   node perf/device/validate.mjs DIST GRID OUTDIR [MAX_SECONDS]      RUNS=n overrides the grid's runs;
//   COPY_TERMS_FROM='A.json B.json' simulates every cell with its profile's host-link copy terms pooled
//   over those profiles (kvtier hil validate --copy-terms-from)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, grid, outArg, maxArg] = process.argv.slice(2);
if (!dist || !grid || !outArg) throw new Error('usage: node perf/device/validate.mjs DIST GRID OUTDIR [MAX_SECONDS]');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { readValidateGrid } = await load('studies/validate-grid.js');
const { validate } = await load('hil/validate/validate.js');
const { formatValidate } = await load('hil/validate/format.js');
const g = readValidateGrid(grid);
if (process.env.RUNS) g.runs = Number(process.env.RUNS);
const r = await validate({
  grid: g,
  out: resolve(outArg),
  hil: { backend: process.env.BACKEND ?? 'cuda', seed: 1, nvmeDir: process.env.NVME_DIR ?? '/tmp' },
  ...(maxArg ? { maxSeconds: Number(maxArg) } : {}),
  ...(process.env.COPY_TERMS_FROM ? { copyTermsFrom: process.env.COPY_TERMS_FROM.split(/\s+/).filter(Boolean) } : {}),
  log: (s) => console.log(s),
});
console.log(formatValidate(r));
