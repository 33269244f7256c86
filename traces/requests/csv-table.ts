/**
 * Just enough CSV for request traces: a header row, comma separated fields, double-quoted fields
 * with "" escapes. A row with the wrong number of fields is a TraceFormatError.
 */
import { TraceFormatError } from './trace-format-error.js';

export function splitCsvRow(text: string, file: string, line: number): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let field = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new TraceFormatError(file, line, '', 'unterminated quoted field');
        field += text.slice(i, q);
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      out.push(field);
      if (i < text.length && text[i] !== ',') throw new TraceFormatError(file, line, '', 'text after a closing quote');
    } else {
      const c = text.indexOf(',', i);
      out.push(c < 0 ? text.slice(i) : text.slice(i, c));
      i = c < 0 ? text.length : c;
    }
    if (i >= text.length) return out;
    i++; // skip the comma
  }
}

/** Locate the header line (first non-blank) and map each required column to its index. */
export function csvHeader(
  lines: readonly string[],
  file: string,
  required: readonly string[],
): { headerLine: number; width: number; index: Record<string, number> } {
  let h = 0;
  while (h < lines.length && lines[h].trim() === '') h++;
  if (h === lines.length) throw new Error(`${file}: empty file (expected a CSV header with ${required.join(', ')})`);
  const names = splitCsvRow(lines[h], file, h + 1).map((s) => s.trim());
  const index: Record<string, number> = {};
  for (const col of required) {
    const j = names.indexOf(col);
    if (j < 0) throw new TraceFormatError(file, h + 1, col, `missing column in the header (found: ${names.join(', ')})`);
    index[col] = j;
  }
  return { headerLine: h + 1, width: names.length, index };
}

export function checkWidth(fields: string[], width: number, file: string, line: number): void {
  if (fields.length !== width) {
    throw new TraceFormatError(file, line, '', `expected ${width} comma-separated fields, got ${fields.length}`);
  }
}
