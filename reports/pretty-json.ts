/**
 * JSON for people: like JSON.stringify(v, null, 2), but any object or array whose one-line form
 * fits in `maxLine` characters stays on one line, so a chart's data rows read one per line.
 */
export function prettyJson(value: unknown, maxLine = 120): string {
  return format(value, '', maxLine, 0) + '\n';
}

function format(value: unknown, indent: string, maxLine: number, used: number): string {
  const flat = JSON.stringify(value);
  if (flat === undefined) return 'null';
  if (value === null || typeof value !== 'object' || indent.length + used + flat.length <= maxLine) return oneLine(value);
  const inner = indent + '  ';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => inner + format(v, inner, maxLine, 0)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  const body = entries.map(([k, v]) => {
    const key = `${JSON.stringify(k)}: `;
    return inner + key + format(v, inner, maxLine, key.length);
  });
  return `{\n${body.join(',\n')}\n${indent}}`;
}

/** One line with a space after `:` and `,`, as a person would write it. */
function oneLine(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(oneLine).join(', ')}]`;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`).join(', ')}}`;
}
