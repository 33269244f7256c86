// The import graph of hil/ (relative imports between its .ts files, type-only ones included): no cycles,
// and the folders point one way: executor uses neither bench nor calibrate, bench does not use calibrate.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const HIL = join(ROOT, 'hil');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'native' || e.name === 'build' ? [] : tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** file -> the hil/ files it imports (paths relative to the repository root) */
export function hilImportGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of tsFiles(HIL)) {
    const src = readFileSync(f, 'utf8');
    const deps = new Set<string>();
    for (const m of src.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)) {
      const spec = (m[1] ?? m[2])!;
      const target = resolve(dirname(f), spec.replace(/\.js$/, '.ts'));
      if (target.startsWith(HIL + '/')) deps.add(relative(ROOT, target));
    }
    graph.set(relative(ROOT, f), [...deps].sort());
  }
  return graph;
}

/** every elementary cycle found by a depth-first search, each listed once from its smallest file */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found = new Map<string, string[]>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const done = new Set<string>();
  const visit = (n: string) => {
    stack.push(n);
    onStack.add(n);
    for (const d of graph.get(n) ?? []) {
      if (onStack.has(d)) {
        const cyc = stack.slice(stack.indexOf(d));
        const k = cyc.indexOf([...cyc].sort()[0]!);
        const norm = [...cyc.slice(k), ...cyc.slice(0, k)];
        found.set(norm.join(' -> '), norm);
      } else if (!done.has(d)) visit(d);
    }
    stack.pop();
    onStack.delete(n);
    done.add(n);
  };
  for (const n of [...graph.keys()].sort()) if (!done.has(n)) visit(n);
  return [...found.values()];
}

const folder = (f: string) => f.split('/')[1]!;

describe('hil import layers', () => {
  const graph = hilImportGraph();

  it('reads the graph (the executor entry imports its stages)', () => {
    expect(graph.get('hil/executor/hil-run.ts')).toContain('hil/executor/run-plan.ts');
    expect(graph.get('hil/calibrate/measure.ts')).toContain('hil/bench/copy-bench.ts');
  });

  it('has no import cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('has no cycles between its folders', () => {
    const folders = new Map<string, Set<string>>();
    for (const [f, deps] of graph) {
      const set = folders.get(folder(f)) ?? new Set<string>();
      for (const d of deps) if (folder(d) !== folder(f)) set.add(folder(d));
      folders.set(folder(f), set);
    }
    expect(cycles(new Map([...folders].map(([k, v]) => [k, [...v].sort()])))).toEqual([]);
  });

  it('finds a cycle where there is one', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });

  it('executor imports neither bench nor calibrate; bench does not import calibrate', () => {
    const wrong: string[] = [];
    const forbidden: Record<string, string[]> = { executor: ['bench', 'calibrate', 'compare', 'checks'], bench: ['calibrate', 'compare'], calibrate: ['compare'], timing: ['executor', 'bench', 'calibrate', 'compare'] };
    for (const [f, deps] of graph) for (const d of deps) if (forbidden[folder(f)]?.includes(folder(d))) wrong.push(`${f} -> ${d}`);
    expect(wrong).toEqual([]);
  });
});
