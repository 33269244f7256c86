// Per copy-bound cell of a stored validate run: the lowered plan's copies per step priced at a
// device-alone pace per copy, against the hardware's step and host issue time (README.md here).
//   npm run build && node lab/data/hil/diag-2026-11-28f/host-bound.mjs lab/validate/run-fc24601-h200-seed191-2026-11-28 /tmp/host-bound
import fs from 'node:fs';
import { basename, join } from 'node:path';
import { registerBuiltinPolicies } from '../../../../dist/policies/builtin.js';
import { recordAndLower } from '../../../../dist/hil/executor/hil-run.js';
import { planOpKind } from '../../../../dist/hil/bench/plan-issue-bench.js';
import { expandGrid } from '../../../../dist/hil/validate/grid.js';
import { cellRunConfig, traceFile } from '../../../../dist/hil/validate/validate.js';
import { readTraceHeader } from '../../../../dist/traces/trace-reader.js';

const [dir, work] = process.argv.slice(2);
if (!dir || !work) throw new Error('usage: host-bound.mjs VALIDATE_DIR WORK_DIR (the grid\'s traces are generated into WORK_DIR/traces)');
/** the device-alone H2D pace at the HIL's 64 KiB slot stride (copy-stride-h200.txt), us per copy */
const PACE = { 9216: 2.84, 17408: 3.03, 33792: 3.18 };
const CELLS = /(synapsevm_40pct|kivi_10pct|smartkv_10pct|uniform-int8_\d+pct)$/;
registerBuiltinPolicies();
fs.mkdirSync(join(work, 'traces'), { recursive: true });
const v = JSON.parse(fs.readFileSync(join(dir, 'validate.json'), 'utf8'));
const cells = new Map(expandGrid(v.grid, (t) => readTraceHeader(t.path).prompt_tokens).map((c) => [c.id, c]));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const b of v.cells) {
  if (b.status !== 'ok' || !CELLS.test(b.id) || !/llama-3-8b/.test(b.model) || !b.hw_host_issue_ms) continue;
  const profile = v.profiles.find((p) => p.model === b.model);
  const prof = join(dir, 'profiles', basename(profile.file));
  const gpu = JSON.parse(fs.readFileSync(prof, 'utf8')).gpu;
  const c = cells.get(b.id);
  const { lowered } = recordAndLower(cellRunConfig(c, traceFile(c, v.grid, work), prof), { backend: 'cuda' });
  const rows = [];
  for (let i = 2; i < lowered.steps.length; i++) {
    const k = { copy: 0, record: 0, kernel: 0, convert: 0, attention: 0, other: 0 };
    let bytes = 0;
    for (const op of lowered.steps[i].ops) {
      k[planOpKind(op)]++;
      if (op.o === 'copy') bytes += op.bytes;
    }
    const size = Math.round(bytes / k.copy);
    const pace = PACE[Object.keys(PACE).map(Number).reduce((a, x) => (Math.abs(x - size) < Math.abs(a - size) ? x : a))];
    const issue = mean(b.hw_host_issue_ms.map((r) => r[i]));
    const others = k.record * gpu.issue_record_us + k.kernel * gpu.issue_kernel_us + k.convert * gpu.issue_convert_us + k.attention * gpu.issue_attention_us;
    rows.push({ copies: k.copy, size, device: (k.copy * pace) / 1000, hw: mean(b.hw_ms.map((r) => r[i])), issue, sim: b.sim_ms[i], perCopy: (issue * 1000 - others) / k.copy });
  }
  const m = (f) => median(rows.map(f));
  console.log(`${b.id}: copies ${m((r) => r.copies)} x ${rows[0].size} B; device alone ${m((r) => r.device).toFixed(2)} ms; hardware ${m((r) => r.hw).toFixed(2)}; host issue ${m((r) => r.issue).toFixed(2)}; simulated ${m((r) => r.sim).toFixed(2)}; host us per copy ${m((r) => r.perCopy).toFixed(2)} (profile ${gpu.issue_copy_us})`);
}
