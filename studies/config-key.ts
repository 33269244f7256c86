/**
 * A configuration's stable key: a hash of everything that decides its result, in canonical form
 * (object keys sorted). Input files (traces, hardware and model profiles) count by their contents,
 * so an edited file never reuses a result computed from the old one.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return JSON.stringify(String(v));
  return JSON.stringify(v) ?? 'null';
}

/** 16 hex digits of sha256 over the canonical JSON. */
export function configKey(v: unknown): string {
  return createHash('sha256').update(canonicalJson(v)).digest('hex').slice(0, 16);
}

/** Hashes input files once per process run (a sweep names the same trace many times). */
export class FileDigests {
  private readonly seen = new Map<string, string>();

  /** sha256 of the file's bytes, or null when it cannot be read (the configuration then fails and says why). */
  of(path: string): string | null {
    let d = this.seen.get(path);
    if (d === undefined) {
      try {
        const h = createHash('sha256');
        const fd = fs.openSync(path, 'r');
        try {
          const buf = Buffer.allocUnsafe(1 << 20);
          for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
        } finally {
          fs.closeSync(fd);
        }
        d = h.digest('hex');
      } catch {
        d = '';
      }
      this.seen.set(path, d);
    }
    return d === '' ? null : d;
  }

  /** A preset name stays a name (its contents are part of the code); a path counts by its contents. */
  input(nameOrPath: string | null | undefined, isPath: (s: string) => boolean): unknown {
    if (nameOrPath === null || nameOrPath === undefined) return null;
    return isPath(nameOrPath) ? { path: nameOrPath, sha256: this.of(nameOrPath) } : nameOrPath;
  }
}
