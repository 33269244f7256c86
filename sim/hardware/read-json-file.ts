import { readFileSync } from 'node:fs';

/**
 * Read and parse a JSON file. Errors name the file; a syntax error also gives the line and column
 * (counted from 1) where parsing stopped.
 */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`${path}: cannot read (${code === 'ENOENT' ? 'no such file' : (e as Error).message})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const message = (e as Error).message;
    const at = /at position (\d+)/.exec(message);
    const where = at ? ` at ${lineColumn(text, Number(at[1]))}` : '';
    throw new Error(`${path}: invalid JSON${where}: ${message}`);
  }
}

/** "line L, column C" of character offset `pos` in `text`. */
export function lineColumn(text: string, pos: number): string {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}
