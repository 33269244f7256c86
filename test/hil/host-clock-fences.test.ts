// The simulator's host clock charges a record for every event the HIL executor records or waits on in
// a step (timing marks, fences and stream waits): with only records costing the host (1 ms each) a
// step is host-bound and lasts as many milliseconds as it has records, which must equal the lowered
// plan's marks, fence records and waits. Checked on the captured trace's offloading steps after the
// first (the first also places the prompt).
import { describe, expect, it } from 'vitest';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { simulate } from '../../sim/run.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('host clock records against the lowered plan', () => {
  it('lru-offload at 10% on the captured trace: as many as the HIL marks, records and waits, step by step', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvtier-fences-'));
    try {
      const hw = loadHardware('h100-pcie5');
      Object.assign(hw.gpu, { issue_record_us: 1000, issue_copy_us: 0, issue_kernel_us: 0, issue_attention_us: 0 });
      const file = join(dir, 'hw.json');
      writeFileSync(file, JSON.stringify(hw));
      const config = { trace: 'traces/captured/brown-long-8k.kvt', model: 'traces/captured/kvtier-brown-gpt.model.json', policy: 'lru-offload', hardware: file, hbm_budget: '10%' };
      const sim = simulate(config).steps.slice(1, 8).map((s) => Math.round(s.latency_ms));
      let rec: PlanRecorder | undefined;
      const r = simulate(config, { executor: (res, cache) => (rec = new PlanRecorder(cache, allLinkKeys(res.hardware))) });
      const { model, hardware, header } = r.resolved;
      const low = lowerPlan(rec!.plan, model, hardware, header.block_size, { slabBytes: 2 << 20, groupSize: 64 });
      const hil = low.steps.slice(1, 8).map((s) => s.ops.filter((o) => o.o === 'mark' || o.o === 'record' || o.o === 'wait').length);
      expect(sim).toEqual(hil);
      // (the steps hold fence records and waits beside the marks)
      expect(low.steps[1].ops.some((o) => o.o === 'wait')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
