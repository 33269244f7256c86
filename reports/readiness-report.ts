/**
 * The readiness report: readiness.json (settings, claims, every verdict with its readings) and
 * index.html (a PASS/FAIL table per check and policy, then each check's readings with the
 * criterion and source beside each number, and how the check was run). No timestamps: the same
 * result gives the same bytes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prettyJson } from './pretty-json.js';
import { renderReportPage, type PageSection } from './report-page.js';
import { CHECKS, CHECK_TITLES, type CheckName } from '../studies/readiness/claims.js';
import type { ReadinessResult } from '../studies/readiness/run-readiness.js';
import type { CheckVerdict } from '../studies/readiness/verdict.js';

export type Cell = 'PASS' | 'FAIL' | 'not claimed';

/** policy → check → PASS / FAIL / not claimed */
export function verdictTable(r: ReadinessResult): { policy: string; cells: Record<CheckName, Cell> }[] {
  return r.claims.map((c) => {
    const cells = {} as Record<CheckName, Cell>;
    for (const check of CHECKS) {
      const v = r.verdicts.find((x) => x.policy === c.policy && x.check === check);
      cells[check] = v ? (v.pass ? 'PASS' : 'FAIL') : 'not claimed';
    }
    return { policy: c.policy, cells };
  });
}

function num(v: number | null): string {
  if (v === null) return '—';
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1000 ? v.toFixed(1) : v.toPrecision(4);
}

function checkSection(check: CheckName, verdicts: CheckVerdict[]): PageSection {
  const rows: (string | number | null)[][] = [];
  for (const v of verdicts) {
    for (const r of v.readings) rows.push([v.policy, r.name, num(r.value), r.criterion, r.criterion === 'reported' ? '' : r.pass ? 'PASS' : 'FAIL', r.source ?? '']);
    rows.push([v.policy, 'verdict', '', '', v.pass ? 'PASS' : 'FAIL', '']);
  }
  const methods = [...new Set(verdicts.map((v) => `- ${v.policy}: ${v.method}`))].join('\n');
  const details = verdicts
    .map((v) => {
      const d = Object.entries(v.details ?? {}).filter(([, x]) => !Array.isArray(x));
      return d.length ? `- ${v.policy}: ${d.map(([k, x]) => `${k} = ${typeof x === 'number' ? num(x) : String(x)}`).join('; ')}` : '';
    })
    .filter((x) => x !== '')
    .join('\n');
  return {
    heading: CHECK_TITLES[check],
    markdown: [`How it was run:\n\n${methods}`, details ? `Details (full lists in readiness.json):\n\n${details}` : ''].filter((x) => x).join('\n\n'),
    table: { columns: ['policy', 'reading', 'value', 'criterion', 'result', 'source'], rows },
  };
}

export function renderReadinessHtml(r: ReadinessResult): string {
  const table = verdictTable(r);
  const s = r.settings;
  const sections: PageSection[] = [
    {
      heading: 'Verdicts',
      markdown:
        `Settings: model \`${s.model}\`, hardware \`${s.hardware}\`, ${s.requests} tsunami requests of ${s.context} prompt tokens and ${s.steps} decode steps, ` +
        `HBM budget ${s.budget}, needle trace of ${s.needle_steps} steps, seed ${s.seed}. A policy is checked only on what its design claims (table below).`,
      table: { columns: ['policy', ...CHECKS.map((c) => CHECK_TITLES[c])], rows: table.map((t) => [t.policy, ...CHECKS.map((c) => t.cells[c])]) },
    },
    {
      heading: 'Claims',
      table: {
        columns: ['policy', 'system', 'claims', 'options', 'design'],
        rows: r.claims.map((c) => [c.policy, c.system, c.claims.join(', '), Object.entries(c.options).map(([k, v]) => `${k}=${v}`).join(', '), c.design]),
      },
    },
  ];
  for (const check of CHECKS) {
    const vs = r.verdicts.filter((v) => v.check === check);
    if (vs.length) sections.push(checkSection(check, vs));
  }
  return renderReportPage({ title: 'kvtier readiness suite', subtitle: 'memory tsunami, precision decay, stutter-free masking, needle retention — in the simulator', sections });
}

export function writeReadinessReport(dir: string, r: ReadinessResult): void {
  writeFileSync(join(dir, 'readiness.json'), `${prettyJson(r)}\n`);
  writeFileSync(join(dir, 'index.html'), renderReadinessHtml(r));
}
