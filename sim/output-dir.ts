/**
 * Output directories are written whole or not at all: files go to a temporary sibling directory
 * that is renamed into place at the end. An existing directory is never overwritten unless asked.
 */
import * as fs from 'node:fs';
import { dirname, basename, join } from 'node:path';

export function writeDirAtomically(out: string, force: boolean, write: (tmp: string) => void): void {
  if (fs.existsSync(out)) {
    const empty = fs.statSync(out).isDirectory() && fs.readdirSync(out).length === 0;
    if (!empty && !force) throw new Error(`${out} already exists; pass --force to replace it`);
  }
  const parent = dirname(out);
  fs.mkdirSync(parent, { recursive: true });
  const tmp = join(parent, `.${basename(out)}.partial-${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  try {
    write(tmp);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  fs.rmSync(out, { recursive: true, force: true });
  fs.renameSync(tmp, out);
}
