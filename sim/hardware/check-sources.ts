import type { HardwareProfile } from './profile.js';

/**
 * Provenance check: `missing` lists the number fields (as field paths, e.g. `links[1].a_to_b.GBps`)
 * that have no entry in `sources`; `unknown` lists sources keys that name no number field.
 */
export function checkSources(profile: HardwareProfile): { missing: string[]; unknown: string[] } {
  const paths: string[] = [];
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'number') paths.push(path);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
    }
  };
  const { sources, ...rest } = profile;
  walk(rest, '');
  const numberPaths = new Set(paths);
  return {
    missing: paths.filter((p) => !(p in sources)),
    unknown: Object.keys(sources).filter((k) => !numberPaths.has(k)),
  };
}
