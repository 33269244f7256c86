/**
 * The simulator's side of a validation run done again against the hardware steps the run stored: each
 * cell that ran is simulated with the current simulator and the run's own calibrated profile for its
 * model (from the run's profiles/ folder), on its trace regenerated from the grid (or cut from the
 * captured file), and its statistics, pools and judgements are recomputed from the stored per-step
 * hardware times. The hardware is not touched: a change to the simulator's model can be checked against
 * every cell of a grid that ran on a GPU, on a machine without one. The cells keep the pool their run
 * gave them (it depends on the bytes the hardware moved too).
 */
import * as fs from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { checkOutDir } from '../../sim/output-dir.js';
import { simulate } from '../../sim/run.js';
import { readTraceHeader } from '../../traces/trace-reader.js';
import { expandGrid } from './grid.js';
import { cellRunConfig, cellsCsv, cellStats, type CellResult, judgedFields, summarizeCells, traceFile, type ValidateResult, writeAtomic } from './validate.js';

export interface ResimulateOptions {
  /** a validation output directory (validate.json, profiles/) */
  dir: string;
  /** where the recomputed validate.json, cells.csv and traces go; must not be `dir` */
  out: string;
  /** replace `out` when it exists and is not empty */
  force?: boolean;
  log?: (s: string) => void;
  onProgress?: (done: number, total: number, id: string) => void;
}

export function resimulate(o: ResimulateOptions): ValidateResult {
  const src = resolve(o.dir);
  const out = resolve(o.out);
  if (src === out) throw new Error(`hil validate-resim: --out must differ from ${o.dir} (its validate.json holds what the hardware measured)`);
  const file = join(src, 'validate.json');
  if (!fs.existsSync(file)) throw new Error(`hil validate-resim: no validate.json in ${o.dir}`);
  checkOutDir(o.out, o.force === true, [src]);
  const prev = JSON.parse(fs.readFileSync(file, 'utf8')) as ValidateResult;
  if (prev.schema !== 'kvtier-hil-validate/v1') throw new Error(`hil validate-resim: ${file} is not a validation result (schema ${String(prev.schema)}, expected kvtier-hil-validate/v1)`);
  const g = prev.grid;
  // the run's profiles, found in its profiles/ folder by file name (the run may have been elsewhere)
  const profileOf = new Map<string, string>();
  for (const p of prev.profiles) {
    const here = join(src, 'profiles', basename(p.file));
    const path = fs.existsSync(here) ? here : p.file;
    if (!fs.existsSync(path)) throw new Error(`hil validate-resim: the profile for ${p.model} is neither ${here} nor ${p.file}`);
    profileOf.set(p.model, path);
  }
  fs.mkdirSync(join(out, 'traces'), { recursive: true });
  const cells = new Map(expandGrid(g, (t) => readTraceHeader(t.path!).prompt_tokens).map((c) => [c.id, c]));
  const results: CellResult[] = [];
  const ok = prev.cells.filter((c) => c.status === 'ok');
  let done = 0;
  for (const before of prev.cells) {
    if (before.status !== 'ok') {
      results.push(before);
      continue;
    }
    const c = cells.get(before.id);
    if (!c) throw new Error(`hil validate-resim: cell ${before.id} of ${file} is not in its grid`);
    const profile = profileOf.get(before.model);
    if (!profile) throw new Error(`hil validate-resim: no profile for model ${before.model} in ${file}`);
    const sim = simulate(cellRunConfig(c, traceFile(c, g, out), profile));
    if (sim.steps.length !== before.hw_ms![0].length) throw new Error(`hil validate-resim: cell ${before.id}: the simulation has ${sim.steps.length} steps, the stored hardware runs ${before.hw_ms![0].length}`);
    const simMs = sim.steps.map((s) => s.latency_ms);
    const st = cellStats(before.pool!, simMs, before.hw_ms!, g.skip_steps, prev.targets);
    results.push({
      ...before,
      sim_bytes: sim.summary.bytes,
      sim_ms: simMs,
      ...judgedFields(st),
    });
    o.onProgress?.(++done, ok.length, before.id);
    o.log?.(`[${done}/${ok.length}] ${before.id}: median ${(st.error.median * 100).toFixed(2)}% (was ${(before.error!.median * 100).toFixed(2)}%), p95 ${(st.error.p95 * 100).toFixed(2)}% (was ${(before.error!.p95 * 100).toFixed(2)}%)`);
  }
  const result: ValidateResult = {
    ...prev,
    cells: results,
    ...summarizeCells(results, g.skip_steps),
    notes: [...prev.notes, `simulator side recomputed from the stored hardware steps of ${o.dir} with the simulator of this build (its profiles; the hardware runs not repeated)`],
  };
  writeAtomic(join(out, 'validate.json'), JSON.stringify(result) + '\n');
  writeAtomic(join(out, 'cells.csv'), cellsCsv(result));
  return result;
}
