/**
 * Admission of a burst of requests against one shared HBM pool, the way the serving simulator
 * admits (serving/serving-sim.ts): strictly FIFO from the head of the queue, a request's HBM
 * reserved whole at admission and freed when it completes. A request that does not fit waits
 * (backpressure); one that could not fit even with nothing else running is refused (lost).
 * Every request arrives at its `arrivalMs`; completions free space before same-time admissions.
 */
export interface AdmissionRequest {
  id: number;
  arrivalMs: number;
  /** HBM the request holds from admission to completion */
  reserveBytes: number;
  /** time from admission to completion */
  serviceMs: number;
}

export interface AdmissionOutcome {
  id: number;
  status: 'completed' | 'refused';
  admitMs: number | null;
  finishMs: number | null;
  waitMs: number | null;
}

export interface AdmissionResult {
  outcomes: AdmissionOutcome[];
  peakBytes: number;
  maxConcurrent: number;
  /** requests that waited (admitted after their arrival) */
  queued: number;
  refused: number;
  makespanMs: number;
}

export function admitFifo(requests: readonly AdmissionRequest[], poolBytes: number): AdmissionResult {
  if (!(poolBytes >= 0)) throw new RangeError(`admission: pool of ${poolBytes} bytes: expected a number >= 0`);
  for (const r of requests) {
    for (const [field, v] of [['arrivalMs', r.arrivalMs], ['serviceMs', r.serviceMs], ['reserveBytes', r.reserveBytes]] as const) {
      if (!(Number.isFinite(v) && v >= 0)) throw new RangeError(`admission: request ${r.id}: ${field} ${v}: expected a finite number >= 0`);
    }
  }
  const queue = [...requests].sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id);
  const outcomes = new Map<number, AdmissionOutcome>();
  const running: { finishMs: number; bytes: number; id: number }[] = [];
  let used = 0;
  let peak = 0;
  let maxConcurrent = 0;
  let now = 0;
  let next = 0;
  while (next < queue.length || running.length > 0) {
    // admit from the head while it has arrived and fits
    while (next < queue.length && queue[next].arrivalMs <= now) {
      const r = queue[next];
      if (r.reserveBytes > poolBytes) {
        outcomes.set(r.id, { id: r.id, status: 'refused', admitMs: null, finishMs: null, waitMs: null });
        next++;
        continue;
      }
      if (used + r.reserveBytes > poolBytes) break;
      used += r.reserveBytes;
      running.push({ finishMs: now + r.serviceMs, bytes: r.reserveBytes, id: r.id });
      outcomes.set(r.id, { id: r.id, status: 'completed', admitMs: now, finishMs: now + r.serviceMs, waitMs: now - r.arrivalMs });
      peak = Math.max(peak, used);
      maxConcurrent = Math.max(maxConcurrent, running.length);
      next++;
    }
    // advance to the next completion or arrival, completions first
    const nextFinish = running.reduce((m, x) => Math.min(m, x.finishMs), Infinity);
    const nextArrival = next < queue.length && queue[next].arrivalMs > now ? queue[next].arrivalMs : Infinity;
    const t = Math.min(nextFinish, nextArrival);
    if (t === Infinity) break;
    now = t;
    for (let i = running.length - 1; i >= 0; i--) {
      if (running[i].finishMs <= now) {
        used -= running[i].bytes;
        running.splice(i, 1);
      }
    }
  }
  const list = requests.map((r) => outcomes.get(r.id)!);
  return {
    outcomes: list,
    peakBytes: peak,
    maxConcurrent,
    queued: list.filter((o) => o.waitMs !== null && o.waitMs > 0).length,
    refused: list.filter((o) => o.status === 'refused').length,
    makespanMs: list.reduce((m, o) => Math.max(m, o.finishMs ?? 0), 0),
  };
}
