/**
 * Which font resvg uses for the PNG. resvg draws no text at all without a font, and SVG from Vega
 * asks for the generic family `sans-serif`, so we map that family to a font found on this machine.
 * A known font file found on disk is loaded by path (fast, and the same PNG on every machine that
 * has it); otherwise resvg scans the system fonts and picks one itself.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ResvgRenderOptions } from '@resvg/resvg-js';

type FontOptions = NonNullable<ResvgRenderOptions['font']>;

/** Families we know by file name, best first: [family, regular file, bold file]. */
const KNOWN: ReadonlyArray<readonly [string, string, string]> = [
  ['DejaVu Sans', 'DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'],
  ['Liberation Sans', 'LiberationSans-Regular.ttf', 'LiberationSans-Bold.ttf'],
  ['Noto Sans', 'NotoSans-Regular.ttf', 'NotoSans-Bold.ttf'],
  ['Arial', 'Arial.ttf', 'Arial Bold.ttf'],
  ['Arial', 'arial.ttf', 'arialbd.ttf'],
  ['Helvetica', 'Helvetica.ttc', 'Helvetica.ttc'],
];

function fontDirs(): string[] {
  const home = homedir();
  return [
    '/usr/share/fonts',
    '/usr/local/share/fonts',
    join(home, '.fonts'),
    join(home, '.local/share/fonts'),
    '/System/Library/Fonts',
    '/Library/Fonts',
    'C:\\Windows\\Fonts',
  ].filter((d) => existsSync(d));
}

/** Every font file below `dir` (depth-limited), by base name -> full path. */
function indexFonts(dir: string, into: Map<string, string>, depth = 0): void {
  if (depth > 4) return;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) indexFonts(p, into, depth + 1);
    else if (/\.(ttf|otf|ttc)$/i.test(e.name) && !into.has(e.name)) into.set(e.name, p);
  }
}

export interface PngFontChoice {
  font: FontOptions;
  /** the family mapped to `sans-serif`, or null when resvg picks whatever system font it finds */
  family: string | null;
  /** false when no font file was seen at all: the PNG will have no text */
  anyFont: boolean;
}

let cached: PngFontChoice | undefined;

export function pngFont(): PngFontChoice {
  if (cached) return cached;
  const files = new Map<string, string>();
  for (const d of fontDirs()) indexFonts(d, files);
  for (const [family, regular, bold] of KNOWN) {
    const r = files.get(regular);
    if (!r) continue;
    const b = files.get(bold);
    const fontFiles = b && b !== r ? [r, b] : [r];
    cached = {
      font: { loadSystemFonts: false, fontFiles, defaultFontFamily: family, sansSerifFamily: family },
      family,
      anyFont: true,
    };
    return cached;
  }
  cached = { font: { loadSystemFonts: true }, family: null, anyFont: files.size > 0 };
  if (!cached.anyFont) {
    process.emitWarning(
      'kvtier reports: no font file found (looked in /usr/share/fonts and the usual places); ' +
        'PNG charts will have no text. Install a font such as fonts-dejavu-core; the SVG is unaffected.',
    );
  }
  return cached;
}
