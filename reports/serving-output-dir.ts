/**
 * Write an output directory whole or not at all, with an async writer (charts render
 * asynchronously): files go to a temporary sibling renamed into place at the end; an existing
 * non-empty directory is replaced only with `force`. (sim/output-dir.ts is the synchronous twin.)
 */
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';

export async function writeDirAtomicallyAsync(out: string, force: boolean, write: (tmp: string) => Promise<void>): Promise<void> {
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
    await write(tmp);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  fs.rmSync(out, { recursive: true, force: true });
  fs.renameSync(tmp, out);
}
