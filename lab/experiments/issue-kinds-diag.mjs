// A diagnostic (lab, not product): some seed-29 grid cells run on the cuda backend, two runs each, with a build
// whose OpIssuer prints the host time per op kind (apply lab/experiments/issue-kinds.diff, build, bundle).
//   node lab/experiments/issue-kinds-diag.mjs DIST CELL_ID_PART...   (KVTIER_HIL_ADDON names the addon)
import fs from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [dist, ...ids] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { readValidateGrid } = await load('studies/validate-grid.js');
const { cellRunConfig, traceFile } = await load('hil/validate/validate.js');
const { expandGrid } = await load('hil/validate/grid.js');
const { readTraceHeader } = await load('traces/trace-reader.js');
const { hilRun } = await load('hil/executor/hil-run.js');
const g = readValidateGrid('lab/validate/grid-seed29.json');
const out = '/tmp/kvd/diag';
fs.mkdirSync(`${out}/traces`, { recursive: true });
const cells = expandGrid(g, (t) => readTraceHeader(t.path).prompt_tokens);
const prof = 'lab/validate/run-3e014ac-h100-seed29-2026-11-27/profiles/llama-3-8b.json';
for (const id of ids) {
  const c = cells.find((x) => x.id.includes(id));
  if (!c) throw new Error(`no cell ${id}`);
  for (let run = 0; run < 2; run++) {
    console.error(`== ${c.id} run ${run}`);
    const r = await hilRun(cellRunConfig(c, traceFile(c, g, out), prof), { backend: 'cuda', seed: 1 });
    const steps = r.result.steps.slice(1);
    const mean = (f) => steps.reduce((a, s) => a + f(s), 0) / steps.length;
    console.error(`   latency ${mean((s) => s.latency_ms).toFixed(2)} ms`);
  }
}
