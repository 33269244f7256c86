/**
 * The measured steps, read from the events once everything has run (us from the base event).
 * Per layer, compute is ready..done (attention and projections) and the wait pre..ready; a step's
 * latency runs from the previous step's last projection to its own; stall = latency - compute,
 * split into stall_wait (waits on the memory stream) and host_gap (the rest). Transfer time is the
 * memory stream's busy spans plus the file tier's time. The first traceSteps steps also give spans
 * for the Chrome trace.
 */
import type { TraceSpan } from '../../sim/stream.js';
import type { NativeBackend } from '../addon-types.js';
import { directionSwitches } from './direction-switches.js';
import type { FileStepTimes } from './file-step-times.js';
import type { LoweredPlan } from './lowered-plan.js';
import type { MeasuredStep } from './measured-step.js';
import type { RunEvents } from './run-events.js';

export function stepTimings(b: NativeBackend, p: LoweredPlan, ev: RunEvents, times: FileStepTimes, o: { traceSteps: number; waitMarks?: boolean }): { steps: MeasuredStep[]; spans: TraceSpan[] } {
  const at = (id: number) => b.elapsedMs(ev.base, ev.marks[id]) * 1000;
  const steps: MeasuredStep[] = [];
  const spans: TraceSpan[] = [];
  let prevEnd = 0;
  p.steps.forEach((s, si) => {
    let compute = 0;
    let wait = 0;
    for (const m of s.layers) {
      const pre = at(m.pre);
      const ready = at(m.ready);
      const attn = at(m.attn);
      const done = at(m.done);
      compute += done - ready;
      wait += ready - pre;
      if (si < o.traceSteps) {
        spans.push({ stream: 'compute', name: 'attention', cat: 'kernel', start: ready, end: attn, args: { step: s.step, layer: m.layer } });
        spans.push({ stream: 'compute', name: 'linear', cat: 'kernel', start: attn, end: done, args: { step: s.step, layer: m.layer } });
      }
    }
    let transfer = 0;
    for (const [a, z, label] of s.memSpans) {
      const ta = at(a);
      const tz = at(z);
      transfer += tz - ta;
      if (si < o.traceSteps) spans.push({ stream: 'memory', name: label, cat: 'copy', start: ta, end: tz, args: { step: s.step } });
    }
    const end = s.layers.length ? at(s.layers[s.layers.length - 1].done) : prevEnd;
    const latency = end - prevEnd;
    prevEnd = end;
    const stall = Math.max(0, latency - compute);
    const waitStats: Partial<MeasuredStep> = {};
    if (o.waitMarks) {
      let w = 0;
      for (const [x, y] of ev.waitPairs[si]) w += b.elapsedMs(x, y) * 1000;
      waitStats.mem_wait_us = w;
      waitStats.mem_waits = ev.waitPairs[si].length;
      waitStats.mem_dir_switches = directionSwitches(s.ops);
    }
    steps.push({
      step: s.step,
      latency_us: latency,
      compute_us: compute,
      stall_us: stall,
      stall_wait_us: wait,
      host_gap_us: Math.max(0, stall - wait),
      host_issue_us: times.issueMs[si] * 1000,
      host_wait_compute_us: times.computeWaitMs[si] * 1000,
      transfer_us: transfer + times.fileMs[si] * 1000,
      file_us: times.fileMs[si] * 1000,
      file_read_us: times.readMs[si] * 1000,
      file_write_us: (times.fileMs[si] - times.readMs[si]) * 1000,
      file_sync_us: times.syncMs[si] * 1000,
      file_syncs: times.syncs[si],
      file_join_us: times.joinMs[si] * 1000,
      bytes: s.bytes,
      ...waitStats,
    });
  });
  return { steps, spans };
}
