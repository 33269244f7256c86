/**
 * Output directories are written whole or not at all: files go to a temporary sibling directory
 * that is renamed into place at the end. An existing directory is replaced only when asked
 * (--force); a path that is a file, or that holds one of the run's inputs (or the working
 * directory), is never replaced.
 */
import * as fs from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';

/** Throws unless `out` may be (re)written; `inputs` are files the run reads. */
export function checkOutDir(out: string, force: boolean, inputs: readonly string[] = []): void {
  const abs = resolve(out);
  const inside = (p: string) => {
    const a = resolve(p);
    return a === abs || a.startsWith(abs + sep);
  };
  if (fs.existsSync(abs)) {
    if (!fs.statSync(abs).isDirectory()) throw new Error(`${out} exists and is not a directory; choose another --out`);
    if (fs.readdirSync(abs).length > 0 && !force) throw new Error(`${out} already exists; pass --force to replace it`);
  }
  if (inside(process.cwd())) throw new Error(`--out ${out} is the working directory or holds it; choose a new directory`);
  for (const p of inputs) if (inside(p)) throw new Error(`--out ${out} holds the input ${p}; replacing it would delete the input`);
}

/** Check `out`, then make and return a fresh temporary sibling to write into. */
export function startOutDir(out: string, force: boolean, inputs: readonly string[] = []): string {
  checkOutDir(out, force, inputs);
  const parent = dirname(resolve(out));
  fs.mkdirSync(parent, { recursive: true });
  const tmp = join(parent, `.${basename(resolve(out))}.partial-${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  return tmp;
}

export function finishOutDir(tmp: string, out: string): void {
  fs.rmSync(out, { recursive: true, force: true });
  fs.renameSync(tmp, out);
}

export function abortOutDir(tmp: string): void {
  fs.rmSync(tmp, { recursive: true, force: true });
}

export function writeDirAtomically(out: string, force: boolean, write: (tmp: string) => void, inputs: readonly string[] = []): void {
  const tmp = startOutDir(out, force, inputs);
  try {
    write(tmp);
  } catch (e) {
    abortOutDir(tmp);
    throw e;
  }
  finishOutDir(tmp, out);
}

export async function writeDirAtomicallyAsync(out: string, force: boolean, write: (tmp: string) => Promise<void>, inputs: readonly string[] = []): Promise<void> {
  const tmp = startOutDir(out, force, inputs);
  try {
    await write(tmp);
  } catch (e) {
    abortOutDir(tmp);
    throw e;
  }
  finishOutDir(tmp, out);
}
