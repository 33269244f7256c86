/**
 * Host-slot strides of a cell's single-block HBM copies, as the HIL executor lowers the plan: per
 * copy on the memory stream between the DRAM region and the HBM arena, the distance in host slots
 * from the previous such copy of the same batch (1: the next slot). Prints the share of each stride
 * class and the copies per step.
 *
 *   npx tsx lab/validate/tools/copy-strides.ts TRACE.kvt POLICY BUDGET PROFILE.json
 */
import { allLinkKeys } from '../../../hil/executor/link-keys.js';
import { lowerPlan } from '../../../hil/executor/lower-plan.js';
import { PlanRecorder } from '../../../hil/executor/plan-recorder.js';
import { simulate } from '../../../sim/run.js';

const [trace, policy, budget, profile] = process.argv.slice(2);
let rec: PlanRecorder | undefined;
let charged = 0;
const r = simulate(
  { trace, policy, hardware: profile, hbm_budget: budget },
  {
    executor: (resolved, cache) => {
      rec = new PlanRecorder(cache, allLinkKeys(resolved.hardware));
      const move = rec.move.bind(rec);
      const stage = rec.stage.bind(rec);
      // the copies the driver charged between a host tier and HBM (one per run)
      rec.move = (b) => {
        if ((b.fromTier === 0) !== (b.toTier === 0)) charged += b.runs;
        return move(b);
      };
      rec.stage = (b) => {
        charged += b.runs;
        return stage(b);
      };
      return rec;
    },
  },
);
const p = lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 2 << 20, groupSize: 128 });
const slot = p.slotBytes ?? 0;
const classes: Record<string, number> = {};
let n = 0;
let steps = 0;
for (const st of p.steps) {
  steps++;
  for (const dir of ['h2d', 'd2h'] as const) {
    let prev = NaN;
    for (const op of st.ops) {
      if (op.o === 'mark') {
        prev = NaN;
        continue;
      }
      if (op.o !== 'copy') continue;
      const h2d = op.dst === 'arena' && (op.src === 'dram' || op.src === 'cxl');
      const d2h = op.src === 'arena' && (op.dst === 'dram' || op.dst === 'cxl');
      if ((dir === 'h2d' && !h2d) || (dir === 'd2h' && !d2h)) continue;
      const host = h2d ? op.srcOff : op.dstOff;
      const s = Math.round((host - prev) / slot);
      const k = `${dir} ${op.bytes > slot ? 'multi' : 'single'} ${Number.isNaN(prev) ? 'first' : s === 1 ? '1' : s >= 2 && s <= 4 ? '2-4' : s >= 5 && s <= 16 ? '5-16' : s > 16 ? '>16' : '<=0'}`;
      classes[k] = (classes[k] ?? 0) + 1;
      n++;
      prev = host + Math.ceil(op.bytes / slot - 1) * slot;
    }
  }
}
console.log(`${policy} ${budget}: charged ${charged}, lowered ${n} copies over ${steps} steps (${(n / steps).toFixed(0)} per step), slot ${slot} B`);
for (const [k, v] of Object.entries(classes).sort()) console.log(`  ${k.padEnd(22)} ${v.toString().padStart(7)}  ${((100 * v) / n).toFixed(1)}%`);
