// Tiers as real memory: copies between regions, the NVMe file tier through a real file,
// events and the two streams; plus bit-exact packing round trips and the loader/doctor.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import { openBackend } from '../../hil/backend.js';
import { formatHilDoctor, hilDoctor } from '../../hil/doctor.js';
import { halfToFloat, floatToHalf } from '../../hil/half.js';
import { loadHil } from '../../hil/load-addon.js';
import { codeAt, dequantizeRef, quantizeRef } from '../../hil/reference/quantize.js';
import { makeRng } from '../../hil/rng.js';
import { backendAvailability } from './availability.js';

const same = (a: Uint8Array, b: Uint8Array): boolean =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('reference packing', () => {
  it.each([2, 4, 8] as const)('int%i codes pack little-end-first and round-trip exactly', (bits) => {
    const qmax = (1 << bits) - 1;
    // each group of 32 spans exactly 0..qmax, so scale = 1, zero = 0 and codes = values
    const values = Array.from({ length: 64 }, (_, i) => (i % 32 === 1 ? qmax : (i % 32) % (qmax + 1)));
    const src = Uint16Array.from(values, floatToHalf);
    const q = quantizeRef(src, bits, 32);
    expect(values.map((_, i) => codeAt(q.codes, i, bits))).toEqual(values);
    expect(Array.from(dequantizeRef(q, 64, bits, 32), halfToFloat)).toEqual(values);
    expect(q.codes[0]! & qmax).toBe(0); // element 0 sits in the lowest bits of byte 0
    expect(bits === 8 ? q.codes[1]! : (q.codes[0]! >> bits) & qmax).toBe(qmax); // element 1 right above it
  });
  it('fp16 conversion rounds half to even and handles subnormals', () => {
    expect(floatToHalf(1 + 2 ** -11)).toBe(0x3c00); // tie -> even
    expect(floatToHalf(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(halfToFloat(floatToHalf(2 ** -24))).toBe(2 ** -24);
    expect(floatToHalf(65520)).toBe(0x7c00);
  });
  it('INT4 group quantization error stays within half a step', () => {
    const rng = makeRng(9);
    const src = new Uint16Array(128 * 50).map(() => floatToHalf(rng.normal()));
    const q = quantizeRef(src, 4, 128);
    const back = dequantizeRef(q, src.length, 4, 128);
    for (let g = 0; g < 50; g++) {
      const scale = halfToFloat(q.meta[2 * g]!);
      for (let i = g * 128; i < (g + 1) * 128; i++) expect(Math.abs(halfToFloat(back[i]!) - halfToFloat(src[i]!))).toBeLessThanOrEqual(scale * 0.5 + 2e-3);
    }
  });
});

describe('loader and doctor', () => {
  it('never throws and names each backend', () => {
    const r = hilDoctor();
    expect(typeof r.backends.cuda.reason).toBe('string');
    expect(formatHilDoctor(r)).toMatch(/host backend: .*\n.*cuda backend: /);
    if (!loadHil().ok) expect(r.addonErrors?.length).toBeGreaterThan(0);
  });
});

for (const kind of ['host', 'cuda'] as const) {
  const avail = backendAvailability(kind);
  describe.skipIf(!avail.available)(`${kind} tiers${avail.available ? '' : ` — skipped: ${avail.reason}`}`, () => {
    let b: NativeBackend;
    let dir: string;
    beforeAll(() => {
      b = openBackend(kind);
      dir = mkdtempSync(join(tmpdir(), 'kvtier-hil-'));
    });
    afterAll(() => {
      b?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('copies real bytes pinned -> device -> pageable on the memory stream, timed by events', async () => {
      const n = (2 << 20) + 4096;
      const data = new Uint8Array(n).map((_, i) => (i * 131) & 0xff);
      const [p, d, g] = [b.alloc('pinned', n), b.alloc('device', n), b.alloc('pageable', n)];
      const [e0, e1] = [b.createEvent(), b.createEvent()];
      b.write(p, 0, data);
      b.record('memory', e0);
      b.copy('memory', d, 0, p, 0, n);
      b.copy('memory', g, 0, d, 0, n);
      b.record('memory', e1);
      await b.synchronize('memory');
      expect(b.elapsedMs(e0, e1)).toBeGreaterThan(0);
      expect(same(b.read(g, 0, n), data)).toBe(true);
      for (const r of [p, d, g]) b.free(r);
    });

    it('refuses out-of-range copies with a named error', () => {
      const r = b.alloc('pinned', 4096);
      expect(() => b.copy('memory', r, 4000, r, 0, 200)).toThrow(/copy destination: bytes \[4000, 4200\) outside region/);
      expect(() => b.alloc('device' as never, 0)).toThrow(/bytes/);
      b.free(r);
    });

    it('copies a slab list byte-exact: alternating over both memory streams, and as one batch call', async () => {
      const slab = (64 << 10) + 512;
      const n = 6;
      const data = new Uint8Array(slab * n).map((_, i) => (i * 2654435761) >>> 24);
      const [p, d, h] = [b.alloc('pinned', slab * n), b.alloc('device', slab * n), b.alloc('pinned', slab * n)];
      b.write(p, 0, data);
      // pinned -> device, slab i to slot n-1-i, copies alternating memory / memory2
      const list = (dst: number, src: number, flip: boolean) => new Float64Array(Array.from({ length: n }, (_, i) => [dst, (flip ? n - 1 - i : i) * slab, src, i * slab, slab]).flat());
      b.copyMany(['memory', 'memory2'], list(d, p, true));
      const ev = b.createEvent();
      b.record('memory2', ev);
      b.waitEvent('memory', ev);
      // device -> pinned as one batch, after both streams' copies
      b.copyBatch('memory', list(h, d, true));
      await b.synchronize();
      const back = b.read(h, 0, slab * n);
      expect(same(back, data)).toBe(true); // flipped twice
      expect(same(b.read(d, 0, slab), data.subarray((n - 1) * slab))).toBe(true);
      b.copyMany('memory2', new Float64Array([h, 0, d, slab, 100]));
      await b.synchronize('memory2');
      expect(same(b.read(h, 0, 100), data.subarray((n - 2) * slab, (n - 2) * slab + 100))).toBe(true);
      b.destroyEvent(ev);
      for (const r of [p, d, h]) b.free(r);
    });

    it('names the valid streams when given a bad one, and enqueues nothing from a rejected list', async () => {
      const [p, d] = [b.alloc('pinned', 8192), b.alloc('device', 8192)];
      b.write(p, 0, new Uint8Array(8192).fill(9));
      b.write(d, 0, new Uint8Array(8192));
      const valid = /Expected 0 \(compute\), 1 \(memory\) or 2 \(memory2\) for stream but received 3/;
      expect(() => b.copy(3 as never, d, 0, p, 0, 16)).toThrow(valid);
      expect(() => b.copyBatch(3 as never, new Float64Array([d, 0, p, 0, 16]))).toThrow(valid);
      const ev = b.createEvent();
      expect(() => b.record(3 as never, ev)).toThrow(valid);
      b.destroyEvent(ev);
      await expect(b.synchronize(3 as never)).rejects.toThrow(valid);
      expect(() => b.copy('memory3' as never, d, 0, p, 0, 16)).toThrow(/Expected 'compute', 'memory' or 'memory2' for stream but received 'memory3'/);
      expect(() => b.copyMany(['memory', 3 as never], new Float64Array([d, 0, p, 0, 16, d, 16, p, 16, 16]))).toThrow(valid);
      expect(() => b.copyMany([], new Float64Array([d, 0, p, 0, 16]))).toThrow(/at least one stream/);
      expect(() => b.copyBatch('memory', new Float64Array([d, 0, p, 0, 16, d, 8000, p, 0, 400]))).toThrow(/copy destination: bytes \[8000, 8400\) outside region/);
      expect(() => b.copyMany('memory', new Float64Array([d, 0, p, 0]))).toThrow(/5 numbers per copy/);
      expect(() => b.copyBatch('memory', [d, 0, p, 0, 16] as never)).toThrow(/Float64Array/);
      await b.synchronize();
      expect(b.read(d, 0, 8192).every((x) => x === 0)).toBe(true); // the valid first copies were not enqueued either
      b.free(p);
      b.free(d);
    });

    it('a compute-stream op waits for an event recorded on the memory stream', async () => {
      const n = 8 << 20;
      const [p, d] = [b.alloc('pinned', n), b.alloc('device', n)];
      const data = new Uint8Array(n).map((_, i) => i & 0x7f);
      b.write(p, 0, data);
      const ev = b.createEvent();
      b.copy('memory', d, 0, p, 0, n);
      b.record('memory', ev);
      b.waitEvent('compute', ev);
      b.copy('compute', p, 0, d, n / 2, n / 2); // reads what the memory stream wrote
      await b.synchronize();
      expect(same(b.read(p, 0, n / 2), data.subarray(n / 2))).toBe(true);
      b.free(p);
      b.free(d);
    });

    it('the NVMe file tier round-trips real bytes through a real file (O_DIRECT or reported fallback)', async () => {
      const loaded = loadHil();
      if (!loaded.ok) throw new Error('addon');
      const bytes = 4 << 20;
      const path = join(dir, 'tier.bin');
      const tier = new loaded.addon.FileTier(b, { path, bytes, threads: 3 });
      expect(statSync(path).size).toBe(bytes);
      if (!tier.direct) expect(tier.bufferedReason.length).toBeGreaterThan(0);
      const src = b.alloc('pinned', bytes);
      const dst = b.alloc('pageable', bytes);
      const data = new Uint8Array(bytes).map((_, i) => (i * 2654435761) >>> 27);
      b.write(src, 0, data);
      const w = await tier.write(src, 0, 0, bytes, { chunkBytes: 256 << 10, sync: true });
      expect(w.direct).toBe(tier.direct);
      const r = await tier.read(dst, 4096, 8192, bytes - 8192, { chunkBytes: 64 << 10 });
      expect(r.bytes).toBe(bytes - 8192);
      expect(same(b.read(dst, 4096, bytes - 8192), data.subarray(8192))).toBe(true);
      await expect(tier.read(dst, 1, 0, 4096)).rejects.toThrow(/aligned/);
      const dev = b.alloc('device', 4096);
      expect(() => tier.read(dev, 0, 0, 4096)).toThrow(/host region/);
      tier.close();
      for (const x of [src, dst, dev]) b.free(x);
    });

    it('reads many requests as one batch (readBatch): every span lands where asked, split into chunks', async () => {
      const loaded = loadHil();
      if (!loaded.ok) throw new Error('addon');
      const bytes = 4 << 20;
      const tier = new loaded.addon.FileTier(b, { path: join(dir, 'batch.bin'), bytes, threads: 5 });
      const src = b.alloc('pinned', bytes);
      const dst = b.alloc('pinned', bytes);
      const data = new Uint8Array(bytes).map((_, i) => (i * 2654435761) >>> 25);
      b.write(src, 0, data);
      await tier.write(src, 0, 0, bytes, { sync: true });
      b.write(dst, 0, new Uint8Array(bytes));
      // [regionOffset, fileOffset, bytes]: runs of different lengths, destinations elsewhere than the file offsets
      const spans = [
        [0, 65536, 65536 * 3],
        [1 << 20, 8192, 4096],
        [2 << 20, 3 << 20, 655360],
        [(3 << 20) + 4096, 0, 8192],
      ];
      const r = await tier.readBatch(dst, new Float64Array(spans.flat()), { chunkBytes: 128 << 10 });
      expect(r.bytes).toBe(spans.reduce((a, s) => a + s[2], 0));
      expect(r.requests).toBe(2 + 1 + 5 + 1); // 192 KiB in 128 KiB chunks: 2; 640 KiB: 5
      expect(r.direct).toBe(tier.direct);
      expect(r.ms).toBeGreaterThanOrEqual(0);
      for (const [at, off, n] of spans) expect(same(b.read(dst, at, n), data.subarray(off, off + n))).toBe(true);
      expect(same(b.read(dst, 65536 * 3, 4096), new Uint8Array(4096))).toBe(true); // untouched between spans
      expect((await tier.readBatch(dst, new Float64Array(0))).bytes).toBe(0);
      // bad spans: the error names the span and its field, and nothing is read
      const fails = (sp: number[], re: RegExp, opts?: { chunkBytes: number }) => expect((async () => tier.readBatch(dst, new Float64Array(sp), opts))()).rejects.toThrow(re);
      await fails([0, 100, 4096], /multiple of 4096/);
      await fails([0, 0, 4096, 0, 100, 4096], /spans\[1\]\.fileOffset: expected a multiple of 4096, got 100/);
      await fails([0, 0, 4096, 0, 0, 1000], /spans\[1\]\.bytes: expected a positive multiple of 4096/);
      await fails([0, Number.NaN, 4096], /spans\[0\]\.fileOffset: expected a non-negative integer/);
      await fails([-4096, 0, 4096], /spans\[0\]\.regionOffset: expected a non-negative integer/);
      await fails([0, 0, 1e30], /spans\[0\]\.bytes: expected a non-negative integer below 2\^53/);
      await fails([0, 0, 4096.5], /spans\[0\]\.bytes: expected a non-negative integer/);
      await fails([0, bytes, 4096], /spans\[0\]: file range \[4194304, 4198400\) is outside the file tier's 4194304 bytes/);
      await fails([100, 0, 4096], /spans\[0\]\.regionOffset: the destination must be 4096-byte aligned/);
      await fails([bytes, 0, 4096], /spans\[0\] destination/);
      await fails([], /chunkBytes/, { chunkBytes: 1000 });
      expect(() => tier.readBatch(dst, new Float64Array([0, 0]))).toThrow(/multiple of 3/);
      expect(() => tier.readBatch(dst, [0, 0, 4096] as unknown as Float64Array)).toThrow(/Float64Array/);
      const dev = b.alloc('device', 4096);
      expect(() => tier.readBatch(dev, new Float64Array([0, 0, 4096]))).toThrow(/host region/);
      tier.close();
      for (const x of [src, dst, dev]) b.free(x);
    });
  });
}
