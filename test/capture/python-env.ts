/**
 * Which Python the capture tests use: $KVTIER_PYTHON, else the first of python3 and
 * /usr/bin/python3 that imports what a test needs. A test without one skips and says why.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '..', '..');
export const CAPTURE_DIR = path.join(REPO, 'traces', 'capture');

function findPython(modules: string): string | null {
  const candidates = [process.env.KVTIER_PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => !!c);
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', `import ${modules}`], { encoding: 'utf8' });
    if (r.status === 0) return py;
  }
  return null;
}

export const PY_NUMPY = findPython('numpy');
export const PY_TORCH = findPython('torch, numpy');
export const TORCH_MISSING =
  'no python3 with torch and numpy (set KVTIER_PYTHON, or on Debian: apt-get install -y python3-torch python3-numpy)';
if (PY_TORCH === null) console.warn(`test/capture: skipping the CPU capture tests: ${TORCH_MISSING}`);

export function runPy(py: string, args: string[], opts: { input?: string } = {}): string {
  const r = spawnSync(py, args, { encoding: 'utf8', cwd: REPO, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, input: opts.input });
  if (r.status !== 0) throw new Error(`${py} ${args.join(' ')} failed (${r.status}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

export function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'kvtier-capture-'));
}
