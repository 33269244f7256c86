/**
 * Writes a sweep's results tables from a fixed column set: results.json (one object per row, every
 * column, null where a value is missing), results.csv (a header line even with no rows, one line per
 * row, empty cells for missing values, newline-terminated), results.arrow (Arrow IPC file, utf8 and
 * float64 columns, null for missing) and results.parquet (Parquet, UTF8 strings and DOUBLE numbers,
 * every column optional, null for missing; readable by DuckDB, pandas, polars, Spark). A non-finite
 * number (NaN, a failed run's metrics) is missing.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { table, toArrowIPC } from 'arquero';
import { float64, utf8, type DataType } from '@uwdata/flechette';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { Column } from './results-schema.js';

export type Cell = string | number | null;

/** One row as the schema's cells, in column order; throws on a value of the wrong type or a column outside the schema. */
export function schemaCells(columns: readonly Column[], row: object): Cell[] {
  const r = row as Record<string, unknown>;
  const known = new Set(columns.map((c) => c.name));
  for (const k of Object.keys(r)) {
    if (!known.has(k) && r[k] !== undefined) throw new Error(`results row ${String(r.id)}: column "${k}" is not in the results schema`);
  }
  return columns.map((c) => {
    const v = r[c.name];
    if (v === undefined || v === null) return null;
    if (c.type === 'number') {
      if (typeof v !== 'number') throw new Error(`results row ${String(r.id)}: column "${c.name}" must be a number (got ${JSON.stringify(v)})`);
      return Number.isFinite(v) ? v : null;
    }
    if (typeof v !== 'string') throw new Error(`results row ${String(r.id)}: column "${c.name}" must be a string (got ${JSON.stringify(v)})`);
    return v;
  });
}

function csvCell(v: Cell): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  return /[",\n\r]/.test(v) || v !== v.trim() ? `"${v.replace(/"/g, '""')}"` : v;
}

export function resultsCsv(columns: readonly Column[], cells: readonly Cell[][]): string {
  const lines = [columns.map((c) => csvCell(c.name)).join(','), ...cells.map((r) => r.map(csvCell).join(','))];
  return lines.join('\n') + '\n';
}

export function resultsJson(columns: readonly Column[], cells: readonly Cell[][]): string {
  const objects = cells.map((r) => Object.fromEntries(columns.map((c, i) => [c.name, r[i]])));
  return JSON.stringify(objects, null, 2) + '\n';
}

export function resultsArrow(columns: readonly Column[], cells: readonly Cell[][]): Uint8Array {
  const data: Record<string, Cell[]> = {};
  const types: Record<string, DataType> = {};
  columns.forEach((c, i) => {
    data[c.name] = cells.map((r) => r[i]);
    types[c.name] = c.type === 'number' ? float64() : utf8();
  });
  return toArrowIPC(table(data), { format: 'file', types }) as Uint8Array;
}

export function resultsParquet(columns: readonly Column[], cells: readonly Cell[][]): Uint8Array {
  const columnData = columns.map((c, i) => ({
    name: c.name,
    data: cells.map((r) => r[i]),
    type: c.type === 'number' ? ('DOUBLE' as const) : ('STRING' as const),
    nullable: true,
  }));
  return new Uint8Array(parquetWriteBuffer({ columnData, createdBy: 'kvtier' }));
}

/** Write results.{json,csv,arrow,parquet} into `dir`. */
export function writeResults(dir: string, columns: readonly Column[], rows: readonly object[]): void {
  const cells = rows.map((r) => schemaCells(columns, r));
  fs.writeFileSync(join(dir, 'results.json'), resultsJson(columns, cells));
  fs.writeFileSync(join(dir, 'results.csv'), resultsCsv(columns, cells));
  fs.writeFileSync(join(dir, 'results.arrow'), resultsArrow(columns, cells));
  fs.writeFileSync(join(dir, 'results.parquet'), resultsParquet(columns, cells));
}
