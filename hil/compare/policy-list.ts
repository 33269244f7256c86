/** `--policies a,b:key=value;key=value,...` into policy names, options and labels. */
export interface PolicySpec {
  name: string;
  options: Record<string, string>;
  label: string;
}

export function parsePolicyList(s: string): PolicySpec[] {
  const out = s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((item) => {
      const [name, rest] = item.split(':', 2) as [string, string | undefined];
      const options: Record<string, string> = {};
      for (const kv of (rest ?? '').split(';').filter(Boolean)) {
        const i = kv.indexOf('=');
        if (i <= 0) throw new Error(`--policies: "${kv}" is not key=value (in "${item}")`);
        options[kv.slice(0, i)] = kv.slice(i + 1);
      }
      const label = [name, ...Object.values(options)].join('-').replace(/[^A-Za-z0-9._-]+/g, '_');
      return { name, options, label };
    });
  if (out.length === 0) throw new Error('--policies: give at least one policy');
  const seen = new Set<string>();
  for (const p of out) {
    if (seen.has(p.label)) throw new Error(`--policies: "${p.label}" is listed twice`);
    seen.add(p.label);
  }
  return out;
}
