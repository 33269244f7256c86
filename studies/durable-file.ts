/** Durable writes: a file appears whole under its name (temp name, fsync, rename, fsync of the folder) or not at all. */
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';

export function fsyncPath(path: string): void {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function writeFileDurably(path: string, data: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, path);
  fsyncPath(dirname(path));
}

/** fsync every file under `dir` and the folders themselves, so what a record points to survives a crash. */
export function fsyncTree(dir: string): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) fsyncTree(p);
    else if (e.isFile()) fsyncPath(p);
  }
  fsyncPath(dir);
}
