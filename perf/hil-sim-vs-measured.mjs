#!/usr/bin/env node
// Offline (no GPU): simulates each policy of a compare file with a profile (the current simulator) and
// compares per-step latency with the HIL's measured per-step latency in one or more compare JSONs
// (lab/data/hil/compare-*.json) or repeat files (repeat-*.json: runs -> label -> ms[], or runs -> compare).
// Prints median / p95 |sim - hil| / hil per policy and per measured run (step 0 left out).
//   node perf/hil-sim-vs-measured.mjs --hardware PROFILE --trace T.kvt [--budget 20%] [--dist dist] FILE...
import { readFileSync } from 'node:fs';
import { deviceArgs } from './device-args.mjs';

const { args, opt, load } = deviceArgs('runs/hil-sim-vs-measured');
const { simulate } = await load('sim/run.js');
const { parsePolicyList } = await load('hil/compare/policy-list.js');
const valued = new Set(['--hardware', '--trace', '--budget', '--dist', '--out', '--policies']);
const files = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1]));
const hardware = opt('hardware');
const trace = opt('trace');
if (!hardware || !trace || files.length === 0) throw new Error('usage: --hardware PROFILE --trace T.kvt [--budget 20%] [--policies a,b:k=v] FILE...');
const q = (a, p) => {
  const b = [...a].sort((x, y) => x - y);
  const i = (b.length - 1) * p;
  const lo = Math.floor(i);
  return b[lo] + (b[Math.min(lo + 1, b.length - 1)] - b[lo]) * (i - lo);
};
// measured runs: name -> label -> per-step ms
const runs = {};
for (const f of files) {
  const d = JSON.parse(readFileSync(f, 'utf8'));
  if (d.policies) runs[f] = Object.fromEntries(d.policies.map((p) => [p.label, p.steps.map((s) => s.hil_latency_ms)]));
  else {
    for (const [k, v] of Object.entries(d.runs)) {
      runs[`${f}@${k}`] = v.policies ? Object.fromEntries(v.policies.map((p) => [p.label, p.steps.map((s) => s.hil_latency_ms)])) : v;
    }
  }
}
const policies = opt('policies', 'full,h2o,streaming-llm,lru-offload,lru-offload:prefetch=false,lru-offload:offload_tier=nvme');
const fmt = (e) => (e.length ? `${(100 * q(e, 0.5)).toFixed(2)}% / ${(100 * q(e, 0.95)).toFixed(2)}%` : '-');
const all = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
console.log(`| policy | TBT p50 sim (ms) | ${Object.keys(runs).join(' | ')} |`);
for (const p of parsePolicyList(policies)) {
  const r = simulate({ trace, policy: p.name, policy_options: p.options, hardware, hbm_budget: opt('budget', '20%') });
  const sim = r.steps.map((s) => s.latency_ms);
  let line = `| ${p.label} | ${r.summary.tbt_ms.p50.toFixed(3)} |`;
  for (const [k, run] of Object.entries(runs)) {
    const h = run[p.label];
    const e = h ? sim.slice(1).map((x, i) => Math.abs(x - h[i + 1]) / h[i + 1]) : [];
    all[k].push(...e);
    line += ` ${fmt(e)} |`;
  }
  console.log(line);
}
console.log(`| all | |${Object.values(all).map((e) => ` ${fmt(e)} |`).join('')}`);
