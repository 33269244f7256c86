// Loads the native addon without ever throwing: every place it may be is tried and every
// failure is kept, so `kvtier hil doctor` can say exactly what is missing and how to fix it.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HilAddon } from './addon-types.js';

export type LoadResult = { ok: true; addon: HilAddon; path: string } | { ok: false; reasons: string[] };

const ADDON_ABI = 1;

/** Where the addon may be: $KVTIER_HIL_ADDON, then hil/build/Release from the source or dist tree. */
export function addonCandidates(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const list = [
    process.env.KVTIER_HIL_ADDON,
    resolve(here, 'build/Release/kvtier_hil.node'), // running from the source tree (tsx, vitest)
    resolve(here, '../../hil/build/Release/kvtier_hil.node'), // running from dist/hil
    resolve(process.cwd(), 'hil/build/Release/kvtier_hil.node'),
  ];
  return [...new Set(list.filter((p): p is string => typeof p === 'string' && p.length > 0))];
}

let cached: LoadResult | undefined;

export function loadHil(): LoadResult {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const reasons: string[] = [];
  for (const path of addonCandidates()) {
    if (!existsSync(path)) {
      reasons.push(`${path}: not found`);
      continue;
    }
    try {
      const addon = require(path) as HilAddon;
      if (addon.abiVersion !== ADDON_ABI) {
        reasons.push(`${path}: built for addon ABI ${addon.abiVersion}, expected ${ADDON_ABI}; rebuild with npm run build:native`);
        continue;
      }
      cached = { ok: true, addon, path };
      return cached;
    } catch (e) {
      reasons.push(`${path}: ${(e as Error).message}`);
    }
  }
  reasons.push('fix: npm run build:native (needs cmake and a C++17 compiler; nvcc adds the cuda backend)');
  cached = { ok: false, reasons };
  return cached;
}
