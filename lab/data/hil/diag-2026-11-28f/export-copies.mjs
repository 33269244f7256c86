// The copies of chosen steps of a stored validate run's cells, as the HIL lowered them, for copy-replay.py:
// per cell and step the copies in plan order as [direction (0 H2D, 1 D2H, 2 other), host offset, HBM
// offset, bytes], beside the cell's hardware and simulated step and the simulator's compute and transfer
// times for that step.
//   npm run build && node lab/data/hil/diag-2026-11-28f/export-copies.mjs VALIDATE_DIR WORK_DIR OUT.json CELL_REGEX STEPS  (then gzip OUT.json)
import fs from 'node:fs';
import { basename, join } from 'node:path';
import { registerBuiltinPolicies } from '../../../../dist/policies/builtin.js';
import { recordAndLower } from '../../../../dist/hil/executor/hil-run.js';
import { expandGrid } from '../../../../dist/hil/validate/grid.js';
import { cellRunConfig, traceFile } from '../../../../dist/hil/validate/validate.js';
import { readTraceHeader } from '../../../../dist/traces/trace-reader.js';
import { simulate } from '../../../../dist/sim/run.js';

const [dir, work, out, pattern, stepsArg] = process.argv.slice(2);
if (!dir || !work || !out || !pattern || !stepsArg) throw new Error('usage: export-copies.mjs VALIDATE_DIR WORK_DIR OUT.json CELL_REGEX STEPS (e.g. 3,8,13)');
const steps = stepsArg.split(',').map(Number);
registerBuiltinPolicies();
fs.mkdirSync(join(work, 'traces'), { recursive: true });
const v = JSON.parse(fs.readFileSync(join(dir, 'validate.json'), 'utf8'));
const cells = new Map(expandGrid(v.grid, (t) => readTraceHeader(t.path).prompt_tokens).map((c) => [c.id, c]));
const HOST = new Set(['dram', 'cxl', 'weights']);
const DEV = new Set(['arena', 'scratch', 'wslots']);
const result = [];
for (const b of v.cells) {
  if (b.status !== 'ok' || !new RegExp(pattern).test(b.id)) continue;
  const c = cells.get(b.id);
  const prof = join(dir, 'profiles', basename(v.profiles.find((p) => p.model === b.model).file));
  const config = cellRunConfig(c, traceFile(c, v.grid, work), prof);
  const { lowered } = recordAndLower(config, { backend: 'cuda' });
  // the simulator's own step (the recording run does not time)
  const sim = simulate(config);
  for (const i of steps) {
    const flat = [];
    const other = {};
    for (const op of lowered.steps[i].ops) {
      if (op.o !== 'copy') continue;
      if (DEV.has(op.dst) && HOST.has(op.src)) flat.push(0, op.srcOff, op.dstOff, op.bytes);
      else if (HOST.has(op.dst) && DEV.has(op.src)) flat.push(1, op.dstOff, op.srcOff, op.bytes);
      else other[`${op.src}->${op.dst}`] = (other[`${op.src}->${op.dst}`] ?? 0) + 1;
    }
    const s = sim.steps[i];
    result.push({ id: b.id, step: i, copies: flat, other, hw_ms: b.hw_ms.map((r) => r[i]), issue_ms: b.hw_host_issue_ms?.map((r) => r[i]), sim_ms: b.sim_ms[i], sim_compute_ms: s.compute_ms, sim_transfer_ms: s.transfer_ms });
  }
  console.error('exported', b.id);
}
fs.writeFileSync(out, JSON.stringify(result));
