/**
 * Opening a file a user named. A missing file, a directory, a device or an unreadable file
 * becomes one message that names the path, what was expected there and, where given, the valid
 * choices (`hint`), instead of a bare ENOENT or EISDIR without the path.
 */
import * as fs from 'node:fs';

export interface InputFile {
  fd: number;
  size: number;
}

function reason(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'it is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return e.message;
  }
}

/** `${path}: cannot read ${what}: <reason> (expected <expected>[; hint])` */
export function inputFileError(path: string, what: string, expected: string, why: string, hint?: string): Error {
  return new Error(`${path}: cannot read ${what}: ${why} (expected ${expected}${hint ? `; ${hint}` : ''})`);
}

/**
 * Open `path` for reading and return its descriptor and size; throws a clear Error unless it is a
 * readable regular file (or, with `acceptPipes`, a pipe such as `<(zcat trace.jsonl.gz)`). `what`
 * names the input ("the attention trace"), `expected` the kind of file ("a .kvt file").
 */
export function openInputFile(path: string, what: string, expected: string, hint?: string, acceptPipes = false): InputFile {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (e) {
    throw inputFileError(path, what, expected, reason(e as NodeJS.ErrnoException), hint);
  }
  try {
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) throw inputFileError(path, what, expected, 'it is a directory', hint);
    if (!st.isFile() && !(acceptPipes && (st.isFIFO() || st.isSocket()))) throw inputFileError(path, what, expected, 'it is not a regular file', hint);
    return { fd, size: st.size };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** The whole file (or pipe) as UTF-8 text, with the same checks and messages as openInputFile. */
export function readInputText(path: string, what: string, expected: string, hint?: string): string {
  const { fd } = openInputFile(path, what, expected, hint, true);
  try {
    return fs.readFileSync(fd, 'utf8');
  } catch (e) {
    throw inputFileError(path, what, expected, reason(e as NodeJS.ErrnoException), hint);
  } finally {
    fs.closeSync(fd);
  }
}
