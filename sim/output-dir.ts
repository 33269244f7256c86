/**
 * Output directories are written whole or not at all: files go to a temporary sibling directory
 * that is renamed into place at the end. An existing directory is replaced only when asked
 * (--force); a path that is a file, or that holds one of the run's inputs (or the working
 * directory), is never replaced. A temporary sibling left by a killed run is removed by the next run
 * writing the same directory.
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

/**
 * Remove the temporary siblings `.NAME.partial-PID` of `out` whose process is gone (a run killed
 * before it could clean up); returns the paths removed.
 */
export function removeOrphanPartials(out: string): string[] {
  const abs = resolve(out);
  const parent = dirname(abs);
  if (!fs.existsSync(parent)) return [];
  const prefix = `.${basename(abs)}.partial-`;
  const removed: string[] = [];
  for (const name of fs.readdirSync(parent)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || processAlive(pid)) continue;
    fs.rmSync(join(parent, name), { recursive: true, force: true });
    removed.push(join(parent, name));
  }
  return removed;
}

/** Whether a process with this id runs on this host. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Check `out`, then make and return a fresh temporary sibling to write into (removing ones left by killed runs). */
export function startOutDir(out: string, force: boolean, inputs: readonly string[] = []): string {
  checkOutDir(out, force, inputs);
  const parent = dirname(resolve(out));
  fs.mkdirSync(parent, { recursive: true });
  removeOrphanPartials(out);
  const tmp = join(parent, `.${basename(resolve(out))}.partial-${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  return tmp;
}

/**
 * Put the finished `tmp` in place of `out`. An `out` being replaced is moved aside first and removed
 * only once `tmp` is in place; if the rename fails, it is put back and `tmp` is left as it was.
 */
export function finishOutDir(tmp: string, out: string): void {
  const aside = fs.existsSync(out) ? join(dirname(resolve(out)), `.${basename(resolve(out))}.replaced-${process.pid}`) : null;
  if (aside) {
    fs.rmSync(aside, { recursive: true, force: true });
    fs.renameSync(out, aside);
  }
  try {
    fs.renameSync(tmp, out);
  } catch (e) {
    if (aside) fs.renameSync(aside, out);
    throw e;
  }
  if (aside) fs.rmSync(aside, { recursive: true, force: true });
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
