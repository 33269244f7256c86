// A long KV cache in device memory for benchmarks: distinct random blocks per precision
// (built with the reference packer), replicated over the sequence, laid out contiguously.
import type { NativeBackend } from '../addon-types.js';
import { packBlock } from '../block-pack.js';
import { randomHalves } from '../checks/kernel-checks.js';
import { type BlockEntry, type BlockGeometry, type Precision, blockBytes, encodeBlockTable } from '../kv-format.js';
import { makeRng } from '../rng.js';

export interface DeviceCache {
  arena: number;
  table: number;
  arenaBytes: number;
  entries: BlockEntry[];
  free(): void;
}

export function buildDeviceCache(b: NativeBackend, g: BlockGeometry, precisions: readonly Precision[], seed = 7): DeviceCache {
  const rng = makeRng(seed);
  const templates = new Map<Precision, Uint8Array[]>();
  const n = g.kvHeads * g.blockTokens * g.headDim;
  for (const p of new Set(precisions)) {
    templates.set(p, Array.from({ length: 8 }, () => packBlock(g, p, randomHalves(rng, n), randomHalves(rng, n))));
  }
  const entries: BlockEntry[] = [];
  let at = 0;
  for (const p of precisions) {
    entries.push({ offset: at, precision: p });
    at += blockBytes(g, p);
  }
  const bytes = new Uint8Array(at);
  entries.forEach((e, i) => bytes.set(templates.get(e.precision)![i % 8]!, e.offset));
  const arena = b.alloc('device', at);
  const tableBytes = encodeBlockTable(entries);
  const table = b.alloc('device', tableBytes.byteLength);
  b.write(arena, 0, bytes);
  b.write(table, 0, tableBytes);
  return {
    arena,
    table,
    arenaBytes: at,
    entries,
    free: () => {
      b.free(arena);
      b.free(table);
    },
  };
}
