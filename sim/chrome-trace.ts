/** The compute and memory streams as a Chrome / Perfetto trace (JSON trace event format). */
import type { TraceSpan } from './stream.js';

export function chromeTrace(spans: TraceSpan[], meta: Record<string, unknown>): string {
  const streams = [...new Set(spans.map((s) => s.stream))];
  const events: unknown[] = [
    { name: 'process_name', ph: 'M', pid: 1, tid: 0, args: { name: 'kvtier simulated GPU' } },
    ...streams.map((s, i) => ({ name: 'thread_name', ph: 'M', pid: 1, tid: i + 1, args: { name: s } })),
  ];
  for (const s of spans) {
    events.push({
      name: s.name,
      cat: s.cat,
      ph: 'X',
      pid: 1,
      tid: streams.indexOf(s.stream) + 1,
      ts: round(s.start),
      dur: round(s.end - s.start),
      args: s.args ?? {},
    });
  }
  return JSON.stringify({ traceEvents: events, displayTimeUnit: 'ms', otherData: meta });
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
