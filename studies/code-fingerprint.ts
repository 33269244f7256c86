/**
 * Which kvtier computed a result: the package version and a hash of the code that computes results
 * (common/, sim/, serving/, studies/, policies/, traces/, and hil/ whose measured tables the simulator imports: .ts, .js and .json,
 * without tests and source maps) under the root this module runs from (the sources or dist/). Saved sweep results are reused only under the
 * same fingerprint.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CodeFingerprint {
  version: string;
  /** 16 hex digits */
  code: string;
}

const CODE_DIRS = ['common', 'sim', 'serving', 'studies', 'policies', 'traces', 'hil'];
const CODE_FILE = /\.(ts|js|json)$/;
const NOT_CODE = /\.(test\.ts|d\.ts)$/;

let cached: CodeFingerprint | undefined;

export function codeFingerprint(): CodeFingerprint {
  if (cached) return cached;
  const root = fileURLToPath(new URL('../', import.meta.url));
  const files: string[] = [];
  const walk = (d: string) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'build' && e.name !== 'node_modules') walk(p);
      }
      else if (e.isFile() && CODE_FILE.test(e.name) && !NOT_CODE.test(e.name)) files.push(p);
    }
  };
  for (const d of CODE_DIRS) walk(join(root, d));
  const h = createHash('sha256');
  for (const f of files.map((p) => relative(root, p).split('\\').join('/')).sort()) {
    h.update(f + '\0');
    h.update(fs.readFileSync(join(root, f)));
    h.update('\0');
  }
  cached = { version: packageVersion(root), code: h.digest('hex').slice(0, 16) };
  return cached;
}

function packageVersion(root: string): string {
  for (let d = root; ; d = dirname(d)) {
    const p = join(d, 'package.json');
    if (fs.existsSync(p)) {
      const pkg = JSON.parse(fs.readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'kvtier') return pkg.version ?? 'unknown';
    }
    if (dirname(d) === d) return 'unknown';
  }
}
