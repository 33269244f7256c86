/** Reading an interface's fields and their doc comments from a TypeScript source file. */

/**
 * The fields of an interface in a source file, in order, each with its doc comment folded to one
 * line ('' where it has none). An index signature (`[key: string]: T`) is listed as `[key]`.
 */
export function interfaceFields(source: string, iface: string, file = 'the source'): { name: string; doc: string }[] {
  const start = source.indexOf(`export interface ${iface} `);
  if (start < 0) throw new Error(`${file}: no "export interface ${iface}"`);
  const lines = source.slice(source.indexOf('{', start) + 1).split('\n');
  const out: { name: string; doc: string }[] = [];
  let depth = 0;
  let comment: string[] | null = null;
  let doc = '';
  for (const line of lines) {
    const t = line.trim();
    if (depth === 0 && t.startsWith('}')) break;
    if (depth === 0) {
      if (t.startsWith('/**')) comment = [];
      if (comment) {
        comment.push(t.replace(/^\/\*\*\s?/, '').replace(/\*\/$/, '').replace(/^\*\s?/, '').trim());
        if (t.endsWith('*/')) {
          doc = comment.filter(Boolean).join(' ');
          comment = null;
        }
        continue;
      }
      const m = /^(?:([a-zA-Z_][a-zA-Z0-9_]*)\??|\[([a-z]+): string\]):/.exec(t);
      if (m) out.push({ name: m[1] ?? `[${m[2]}]`, doc });
      doc = '';
    }
    depth += (line.match(/{/g) ?? []).length - (line.match(/}/g) ?? []).length;
  }
  return out;
}

/** The fields of an interface that carry a doc comment. */
export function documentedFields(source: string, iface: string, file = 'the source'): { name: string; doc: string }[] {
  return interfaceFields(source, iface, file).filter((f) => f.doc !== '');
}
