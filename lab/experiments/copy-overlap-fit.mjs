// Per-op fit of a run's memory-stream copy batches against what ran beside them on the compute stream.
//   node lab/experiments/copy-overlap-fit.mjs HIL_TRACE SIM_TRACE [SKIP_STEPS]
// HIL_TRACE: trace.json(.gz) of a `kvtier hil run` (spans per batch between its marks, per layer
// attention and projections); SIM_TRACE: the simulator's trace.json(.gz) of the same plan (each batch's
// copies as `runs`, its bytes). Per op kind, the measured and simulated time per step; and where a step
// has as many batches of a kind in both (the k-th measured one taken as the k-th simulated one), a
// least-squares fit of each measured batch:
//   time = per_copy x copies + per_batch [+ us_per_MB x MB] + k_attn x (us beside attention) + k_gemv x (us beside projections)
// (the MB term only where the bytes per copy vary; a term whose column is all zero is left out). The
// overlap there depends on the batch's own time (a longer batch runs longer beside the projections), so
// a second fit takes it from the batch's start and its predicted time instead (per_copy and per_batch
// of the batches beside no projections): time = per_copy x copies + per_batch + k x (predicted us
// beside projections); and the per-copy time (and per_copy, per_batch fitted on them alone) of the
// batches predicted wholly beside projections and of those predicted beside none.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const [hilPath, simPath, skipArg] = process.argv.slice(2);
if (!hilPath || !simPath) throw new Error('usage: node lab/experiments/copy-overlap-fit.mjs HIL_TRACE SIM_TRACE [SKIP_STEPS]');
const skip = Number(skipArg ?? 1);

function load(path) {
  const raw = readFileSync(path);
  const d = JSON.parse((path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8'));
  const names = new Map(d.traceEvents.filter((e) => e.name === 'thread_name').map((e) => [e.tid, e.args.name]));
  const steps = new Map();
  for (const e of d.traceEvents) {
    if (e.ph !== 'X' || e.args?.step === undefined) continue;
    const s = { stream: names.get(e.tid), name: e.name, label: e.name.split(' ')[0], t0: e.ts, t1: e.ts + e.dur, args: e.args };
    if (!steps.has(e.args.step)) steps.set(e.args.step, []);
    steps.get(e.args.step).push(s);
  }
  for (const list of steps.values()) list.sort((a, b) => a.t0 - b.t0);
  return steps;
}

const overlap = (a, b, spans) => spans.reduce((sum, s) => sum + Math.max(0, Math.min(b, s.t1) - Math.max(a, s.t0)), 0);

/** least squares by the normal equations (Gaussian elimination, partial pivoting); coefficients and R^2 */
function fit(X, y) {
  const k = X[0].length;
  const A = Array.from({ length: k }, (_, i) => Array.from({ length: k + 1 }, (_, j) => X.reduce((s, r, n) => s + r[i] * (j < k ? r[j] : y[n]), 0)));
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
    [A[c], A[p]] = [A[p], A[c]];
    for (let r = 0; r < k; r++) {
      if (r === c || A[c][c] === 0) continue;
      const f = A[r][c] / A[c][c];
      for (let j = c; j <= k; j++) A[r][j] -= f * A[c][j];
    }
  }
  const coef = A.map((row, i) => row[k] / row[i]);
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  let ss = 0;
  let st = 0;
  X.forEach((r, n) => {
    const e = y[n] - r.reduce((s, x, i) => s + x * coef[i], 0);
    ss += e * e;
    st += (y[n] - mean) ** 2;
  });
  return { coef, r2: 1 - ss / st, rms: Math.sqrt(ss / y.length) };
}

const hil = load(hilPath);
const sim = load(simPath);
const rows = new Map();
const totals = new Map();
let aligned = 0;
let unaligned = 0;
for (const [step, hs] of hil) {
  if (step < skip || !sim.has(step)) continue;
  const ss = sim.get(step);
  const attn = hs.filter((s) => s.stream === 'compute' && s.name === 'attention');
  const gemv = hs.filter((s) => s.stream === 'compute' && s.name === 'linear');
  const hm = hs.filter((s) => s.stream === 'memory');
  const sm = ss.filter((s) => s.stream === 'memory');
  for (const [list, key] of [[hm, 'hw'], [sm, 'sim']]) {
    for (const s of list) {
      const t = totals.get(s.label) ?? { hw: 0, sim: 0, copies: 0, bytes: 0, steps: new Set() };
      t[key] += s.t1 - s.t0;
      if (key === 'sim') {
        t.copies += s.args.runs ?? 0;
        t.bytes += s.args.bytes ?? 0;
      }
      t.steps.add(step);
      totals.set(s.label, t);
    }
  }
  for (const label of new Set(hm.map((s) => s.label))) {
    const hk = hm.filter((s) => s.label === label);
    const sk = sm.filter((s) => s.label === label);
    if (hk.length !== sk.length) {
      unaligned++;
      continue;
    }
    aligned++;
    const r = rows.get(label) ?? { X: [], y: [], at: [], attnUs: 0, gemvUs: 0 };
    hk.forEach((h, i) => {
      const oa = overlap(h.t0, h.t1, attn);
      const og = overlap(h.t0, h.t1, gemv);
      r.X.push([sk[i].args.runs, 1, (sk[i].args.bytes ?? 0) / 1e6, oa, og]);
      r.at.push([h.t0, gemv]);
      r.y.push(h.t1 - h.t0);
      r.attnUs += oa;
      r.gemvUs += og;
    });
    rows.set(label, r);
  }
}
console.log(`${hilPath}\n  steps from ${skip}: ${aligned} (step, op kind) pairs with as many batches in both, ${unaligned} not`);
console.log('  per step, measured / simulated (ms), copies and MB as simulated:');
for (const [label, t] of totals) {
  const n = t.steps.size;
  console.log(`    ${label.padEnd(9)} hw ${(t.hw / n / 1000).toFixed(3)} sim ${(t.sim / n / 1000).toFixed(3)} (${t.sim > 0 ? `${((t.hw / t.sim - 1) * 100).toFixed(1)}%` : '-'})  copies ${(t.copies / n).toFixed(0)}  MB ${(t.bytes / n / 1e6).toFixed(1)}`);
}
if (rows.size) console.log('  per batch, least squares: time = per_copy x copies + per_batch [+ us_per_MB x MB] + k_attn x us beside attention + k_gemv x us beside projections');
for (const [label, r] of rows) {
  const names = ['per_copy', 'per_batch', 'us_per_MB', 'k_attn', 'k_gemv'];
  const perCopyMB = r.X.map((x) => x[2] / x[0]);
  const lo = Math.min(...perCopyMB);
  const hi = Math.max(...perCopyMB);
  const keep = names.map((_, j) => r.X.some((x) => x[j] !== 0) && !(j === 2 && hi - lo <= 0.01 * hi));
  const f = fit(r.X.map((x) => x.filter((_, j) => keep[j])), r.y);
  const kept = names.filter((_, j) => keep[j]);
  const terms = kept.map((n, i) => `${n} ${f.coef[i].toFixed(n.startsWith('k_') ? 3 : 2)}`).join(', ');
  const copies = r.X.reduce((s, x) => s + x[0], 0);
  console.log(`    ${label.padEnd(9)} batches ${r.y.length} copies ${copies}: ${terms} (R^2 ${f.r2.toFixed(3)}, rms ${f.rms.toFixed(1)} us; beside attention ${(r.attnUs / 1000).toFixed(2)} ms, projections ${(r.gemvUs / 1000).toFixed(2)} ms)`);
  // the batches beside no projections give each batch's predicted time; its overlap from its start
  const base = r.X.map((x, n) => n).filter((n) => r.X[n][4] === 0);
  if (base.length < 5 || keep[2]) continue;
  const f0 = fit(base.map((n) => [r.X[n][0], 1]), base.map((n) => r.y[n]));
  const pred = r.X.map((x, n) => {
    const [t0, gemv] = r.at[n];
    const span = f0.coef[0] * x[0] + f0.coef[1];
    return [x[0], 1, overlap(t0, t0 + span, gemv), span];
  });
  const f1 = fit(pred.map((x) => x.slice(0, 3)), r.y);
  const share = (n) => pred[n][2] / pred[n][3];
  // per subset: the mean time per copy, and per_copy and per_batch fitted on that subset alone
  const perCopy = (ns) => {
    if (!ns.length) return '-';
    const mean = `${(ns.reduce((a, n) => a + r.y[n] / r.X[n][0], 0) / ns.length).toFixed(2)} us`;
    if (ns.length < 5) return `${mean} (${ns.length} batches)`;
    const g = fit(ns.map((n) => [r.X[n][0], 1]), ns.map((n) => r.y[n]));
    return `${mean} (${ns.length} batches; per_copy ${g.coef[0].toFixed(2)}, per_batch ${g.coef[1].toFixed(2)})`;
  };
  const all = r.y.map((_, n) => n);
  console.log(`    ${' '.repeat(9)} from the predicted overlap: per_copy ${f1.coef[0].toFixed(2)}, per_batch ${f1.coef[1].toFixed(2)}, k_gemv ${f1.coef[2].toFixed(3)} (R^2 ${f1.r2.toFixed(3)}); per copy, predicted wholly beside projections ${perCopy(all.filter((n) => share(n) > 0.9))}, beside none ${perCopy(all.filter((n) => share(n) === 0))}`);
}
