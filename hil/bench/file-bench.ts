// NVMe tier: read and write bandwidth vs request size through the file tier (O_DIRECT when
// the filesystem allows it; the rows say which was used).
import type { NativeBackend } from '../addon-types.js';
import { loadHil } from '../load-addon.js';
import { median } from '../timing/median.js';

export interface FileRow {
  requestBytes: number;
  writeGBps: number;
  readGBps: number;
  direct: boolean;
  path: string;
}

export async function benchFile(b: NativeBackend, o: { path: string; totalBytes: number; requestSizes: number[]; threads?: number; trials?: number }): Promise<FileRow[]> {
  const loaded = loadHil();
  if (!loaded.ok) throw new Error(loaded.reasons.join('; '));
  const tier = new loaded.addon.FileTier(b, { path: o.path, bytes: o.totalBytes, threads: o.threads ?? 4, removeOnClose: true });
  const buf = b.alloc('pinned', o.totalBytes);
  b.write(buf, 0, new Uint8Array(o.totalBytes).map((_, i) => (i * 2654435761) >>> 24));
  const rows: FileRow[] = [];
  try {
    for (const req of o.requestSizes) {
      const w: number[] = [];
      const r: number[] = [];
      for (let t = 0; t < (o.trials ?? 3); t++) {
        w.push((await tier.write(buf, 0, 0, o.totalBytes, { chunkBytes: req, sync: true })).ms);
        r.push((await tier.read(buf, 0, 0, o.totalBytes, { chunkBytes: req })).ms);
      }
      rows.push({ requestBytes: req, writeGBps: o.totalBytes / (median(w) * 1e6), readGBps: o.totalBytes / (median(r) * 1e6), direct: tier.direct, path: o.path });
    }
  } finally {
    tier.close();
    b.free(buf);
  }
  return rows;
}
