/**
 * Streaming, synchronous reader of .kvt attention traces (format in traces/FORMAT.md).
 *
 * It reads the file in chunks into one reusable buffer and hands out steps whose typed arrays
 * (idx, mass, norms) are VIEWS into that buffer: they are valid only until the next step is read
 * (or the reader is rewound or closed). Copy what you keep (cloneStep). The step and layer objects
 * themselves are fresh for every step. A trace larger than memory replays in constant memory.
 *
 * Checked while reading: magic, version, header checksum and fields, every record's magic, step
 * number, payload size and checksum, each layer's nBlocks against the header and its sizes, the
 * end record with its step count, and every row's values (idx in range and unique, masses and
 * remainder finite in [0, 1] and summing to 1, norms finite and >= 0) with the RowValueCheck the
 * writer uses, in the pass that takes the row's views. So every path that replays or summarises a
 * trace (run, sweep, hil run, trace stats) refuses exactly what `trace validate` refuses.
 */
import * as fs from 'node:fs';
import {
  END_MAGIC,
  FILE_MAGIC,
  LAYER_FIXED_WORDS,
  MAX_HEADER_BYTES,
  PREAMBLE_BYTES,
  RECORD_HEADER_BYTES,
  STEP_MAGIC,
  assertLittleEndian,
} from './binary-layout.js';
import { wordChecksum, wordChecksumI32 } from './checksum.js';
import { TRACE_VERSION, blocksFor, contextTokensAt, type LayerAttention, type TraceHeader, type TraceStep } from './format.js';
import { openInputFile } from './input-file.js';
import { RowValueCheck, checkMassTolerance, rowLabel } from './row-values.js';
import { checkTraceHeader } from './trace-header.js';

export interface TraceReaderOptions {
  /** size of the reusable read buffer in bytes (at least 64; grown when one record is larger); default 4 MiB */
  chunkBytes?: number;
  /** verify each record's checksum (default true; costs one pass over the payload) */
  verifyChecksums?: boolean;
  /** allowed |sum(mass) + remainder - 1| per row; default 1e-3 (as the writer) */
  massTolerance?: number;
}

const TRACE_WHAT = 'the attention trace';
const TRACE_EXPECTED = 'a .kvt attention trace file';

function openTraceFile(path: string): { fd: number; size: number } {
  return openInputFile(path, TRACE_WHAT, TRACE_EXPECTED);
}

const EMPTY_F32 = new Float32Array(0);
const EMPTY_U32 = new Uint32Array(0);

function hex(v: number): string {
  return `0x${v.toString(16).padStart(8, '0')}`;
}

interface Preamble {
  header: TraceHeader;
  dataOffset: number;
}

function readExactly(fd: number, into: Uint8Array, at: number, n: number, position: number): number {
  let got = 0;
  while (got < n) {
    const r = fs.readSync(fd, into, at + got, n - got, position + got);
    if (r === 0) break;
    got += r;
  }
  return got;
}

function readPreamble(fd: number, path: string, fileBytes: number): Preamble {
  if (fileBytes === 0) throw new Error(`${path}: empty file (not a kvtier attention trace)`);
  const pre = new Uint8Array(new ArrayBuffer(PREAMBLE_BYTES));
  const got = readExactly(fd, pre, 0, PREAMBLE_BYTES, 0);
  for (let i = 0; i < FILE_MAGIC.length && i < got; i++) {
    if (pre[i] !== FILE_MAGIC[i]) {
      throw new Error(`${path}: byte ${i}: bad magic, expected "KVTRACE\\0" (not a kvtier attention trace)`);
    }
  }
  if (got < PREAMBLE_BYTES) {
    throw new Error(`${path}: truncated in the file preamble: ${got} bytes, expected at least ${PREAMBLE_BYTES}`);
  }
  const w = new Uint32Array(pre.buffer);
  if (w[2] !== TRACE_VERSION) {
    throw new Error(`${path}: byte 8: unsupported format version ${w[2]} (this reader reads version ${TRACE_VERSION})`);
  }
  const len = w[3]!;
  if (len % 4 !== 0 || len === 0 || len > MAX_HEADER_BYTES) {
    throw new Error(`${path}: byte 12: header length ${len}: expected a non-zero multiple of 4 up to ${MAX_HEADER_BYTES} (file corrupted)`);
  }
  if (PREAMBLE_BYTES + len > fileBytes) {
    throw new Error(`${path}: truncated in the header JSON: it needs bytes ${PREAMBLE_BYTES}..${PREAMBLE_BYTES + len}, the file has ${fileBytes}`);
  }
  const json = new Uint8Array(new ArrayBuffer(len));
  readExactly(fd, json, 0, len, PREAMBLE_BYTES);
  const sum = wordChecksum(new Int32Array(json.buffer), 0, len / 4);
  if (sum !== w[4]) {
    throw new Error(`${path}: byte 16: header checksum mismatch: stored ${hex(w[4]!)}, computed ${hex(sum)} (file corrupted)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(json));
  } catch (e) {
    throw new Error(`${path}: byte ${PREAMBLE_BYTES}: header is not UTF-8 JSON: ${(e as Error).message}`);
  }
  return { header: checkTraceHeader(parsed, path), dataOffset: PREAMBLE_BYTES + len };
}

/** Read and check only the header of a trace. */
export function readTraceHeader(path: string): TraceHeader {
  const { fd, size } = openTraceFile(path);
  try {
    return readPreamble(fd, path, size).header;
  } finally {
    fs.closeSync(fd);
  }
}

export class TraceReader implements Iterable<TraceStep> {
  readonly path: string;
  readonly header: TraceHeader;
  /** byte offset of the first step record */
  readonly dataOffset: number;
  readonly fileBytes: number;
  private readonly verify: boolean;
  private readonly rows: number;
  private readonly topk: boolean;
  private readonly values: RowValueCheck;
  private fd: number | null;
  private buf: ArrayBuffer;
  private u8: Uint8Array;
  private u32: Uint32Array;
  private i32: Int32Array;
  private f32: Float32Array;
  /** file offset of buf[0], and of the end of the valid bytes in buf */
  private bufStart = 0;
  private bufEnd = 0;
  /** file offset of the next record */
  private pos: number;
  private next = 0;
  private done = false;
  private recordAt = -1;

  constructor(path: string, options: TraceReaderOptions = {}) {
    assertLittleEndian();
    this.path = path;
    this.verify = options.verifyChecksums ?? true;
    const tolerance = checkMassTolerance(options.massTolerance);
    const { fd, size } = openTraceFile(path);
    try {
      this.fileBytes = size;
      const pre = readPreamble(fd, path, this.fileBytes);
      this.header = pre.header;
      this.dataOffset = pre.dataOffset;
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
    this.fd = fd;
    this.rows = this.header.layers * this.header.kv_groups;
    this.topk = this.header.encoding === 'topk';
    this.values = new RowValueCheck(this.header.kv_groups, !this.topk, tolerance);
    this.buf = new ArrayBuffer(Math.max(64, Math.ceil((options.chunkBytes ?? 4 << 20) / 4) * 4));
    this.u8 = new Uint8Array(this.buf);
    this.u32 = new Uint32Array(this.buf);
    this.i32 = new Int32Array(this.buf);
    this.f32 = new Float32Array(this.buf);
    this.pos = this.dataOffset;
    this.bufStart = this.bufEnd = this.dataOffset;
  }

  /** Steps read since the start (or the last rewind). */
  get stepsRead(): number {
    return this.next;
  }

  /** File byte offset of the record last read (-1 before the first). */
  get recordOffset(): number {
    return this.recordAt;
  }

  /** Go back to the first step. */
  rewind(): void {
    this.pos = this.dataOffset;
    this.next = 0;
    this.done = false;
    this.recordAt = -1;
  }

  /**
   * Each for..of starts again from the first step (so a trace can be replayed twice); one
   * iteration at a time. Typed arrays of a step are valid until the next step is read.
   */
  [Symbol.iterator](): IterableIterator<TraceStep> {
    this.rewind();
    const it: IterableIterator<TraceStep> = {
      next: (): IteratorResult<TraceStep> => {
        const s = this.readStep();
        return s === null ? { value: undefined, done: true } : { value: s, done: false };
      },
      [Symbol.iterator]: () => it,
    };
    return it;
  }

  /** The next step, or null after the last one (when the end record has been checked). */
  readStep(): TraceStep | null {
    if (this.done) return null;
    const h = this.header;
    const at = this.pos;
    this.recordAt = at;
    const haveHeader = this.ensure(RECORD_HEADER_BYTES);
    if (haveHeader < RECORD_HEADER_BYTES) {
      if (haveHeader === 0) {
        const after = this.next === 0 ? 'the file header' : `step ${this.next - 1}`;
        throw new Error(`${this.path}: truncated after ${after} (${this.next} of ${h.steps} steps present; no end record)`);
      }
      throw new Error(`${this.path}: truncated at byte ${at}: ${haveHeader} bytes of a ${RECORD_HEADER_BYTES}-byte record header`);
    }
    const u32 = this.u32;
    const w0 = (at - this.bufStart) / 4;
    const magic = u32[w0]!;
    if (magic === END_MAGIC) return this.endRecord(at, w0);
    const what = `${this.path}: record for step ${this.next} at byte ${at}`;
    if (magic !== STEP_MAGIC) {
      throw new Error(`${what}: bad record magic ${hex(magic)}, expected "KVST" (${hex(STEP_MAGIC)}) or "KEND" (file corrupted)`);
    }
    if (u32[w0 + 1] !== this.next) {
      throw new Error(`${what}: step number ${u32[w0 + 1]}, expected ${this.next} (file corrupted)`);
    }
    if (this.next >= h.steps) {
      throw new Error(`${what}: the header declares ${h.steps} steps, the file has more (file corrupted)`);
    }
    const payloadBytes = u32[w0 + 2]!;
    const ctx = contextTokensAt(h, this.next);
    const nBlocks = blocksFor(ctx, h.block_size);
    const listedMax = this.topk ? Math.min(h.topk!, nBlocks) : nBlocks;
    const maxBytes = 4 * this.rows * (LAYER_FIXED_WORDS + (this.topk ? 2 : 1) * listedMax + nBlocks);
    if (payloadBytes % 4 !== 0 || payloadBytes > maxBytes) {
      throw new Error(`${what}: payload size ${payloadBytes} bytes: expected a multiple of 4 up to ${maxBytes} (file corrupted)`);
    }
    const need = RECORD_HEADER_BYTES + payloadBytes;
    const have = this.ensure(need);
    if (have < need) {
      throw new Error(
        `${what}: truncated: the record needs ${need} bytes, the file has ${have} (${this.next} of ${h.steps} steps complete)`,
      );
    }
    // ensure() may have moved the data: recompute the word offset
    const p0 = (at - this.bufStart) / 4 + 4;
    const pEnd = p0 + payloadBytes / 4;
    if (this.verify) {
      const sum = wordChecksumI32(this.i32, p0, pEnd);
      if (sum !== this.i32[p0 - 1]) {
        throw new Error(`${what}: checksum mismatch: stored ${hex(this.u32[p0 - 1]!)}, computed ${hex(sum >>> 0)} (file corrupted)`);
      }
    }
    const layers = this.parseLayers(p0, pEnd, nBlocks, listedMax, what);
    this.pos = at + need;
    const step: TraceStep = { step: this.next, contextTokens: ctx, layers };
    this.next++;
    return step;
  }

  /** Close the file; steps read earlier lose their data. */
  close(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }

  private parseLayers(p0: number, pEnd: number, nBlocks: number, listedMax: number, what: string): LayerAttention[] {
    const u32 = this.u32;
    const f32 = this.f32;
    const buf = this.buf;
    const layers = new Array<LayerAttention>(this.rows);
    let w = p0;
    for (let r = 0; r < this.rows; r++) {
      if (w + LAYER_FIXED_WORDS > pEnd) {
        throw new Error(`${what}: ${rowLabel(r, this.header.kv_groups)}: payload ends inside the layer (file corrupted)`);
      }
      const nb = u32[w]!;
      const listed = u32[w + 1]!;
      const remainder = f32[w + 2]!;
      const normFrom = u32[w + 3]!;
      const nNorms = u32[w + 4]!;
      if (nb !== nBlocks || listed > listedMax || (!this.topk && listed !== nBlocks) || normFrom + nNorms > nBlocks) {
        const where = `${what}: ${rowLabel(r, this.header.kv_groups)} at byte ${this.bufStart + 4 * w}`;
        if (nb !== nBlocks) throw new Error(`${where}: nBlocks ${nb}, expected ${nBlocks} from the header (file corrupted)`);
        if (normFrom + nNorms > nBlocks) {
          throw new Error(`${where}: norms for blocks ${normFrom}..${normFrom + nNorms - 1} exceed nBlocks ${nBlocks} (file corrupted)`);
        }
        throw new Error(`${where}: ${listed} listed blocks, expected ${this.topk ? `at most ${listedMax}` : nBlocks} (file corrupted)`);
      }
      w += LAYER_FIXED_WORDS;
      const end = w + (this.topk ? 2 * listed : listed) + nNorms;
      if (end > pEnd) {
        throw new Error(`${what}: ${rowLabel(r, this.header.kv_groups)}: its arrays run past the payload end (file corrupted)`);
      }
      let idx: Uint32Array | null = null;
      if (this.topk) {
        idx = listed === 0 ? EMPTY_U32 : new Uint32Array(buf, 4 * w, listed);
        w += listed;
      }
      const mass = listed === 0 ? EMPTY_F32 : new Float32Array(buf, 4 * w, listed);
      w += listed;
      const norms = nNorms === 0 ? EMPTY_F32 : new Float32Array(buf, 4 * w, nNorms);
      w += nNorms;
      // values before the row is handed out: an index past the layer's blocks would make a replay
      // read and write other blocks' state, a NaN or negative mass would skew every metric
      this.values.check(idx, mass, remainder, norms, nb, what, r);
      layers[r] = { nBlocks: nb, idx, mass, remainder, normFrom, norms };
    }
    if (w !== pEnd) {
      throw new Error(`${what}: ${4 * (pEnd - w)} bytes of payload after the last layer (file corrupted)`);
    }
    return layers;
  }

  private endRecord(at: number, w0: number): null {
    const h = this.header;
    const u32 = this.u32;
    const where = `${this.path}: end record at byte ${at}`;
    if (u32[w0 + 2] !== 0 || u32[w0 + 3] !== 0) {
      throw new Error(`${where}: payload size ${u32[w0 + 2]} and checksum ${hex(u32[w0 + 3]!)}, expected 0 and 0 (file corrupted)`);
    }
    if (u32[w0 + 1] !== this.next) {
      throw new Error(`${where}: step count ${u32[w0 + 1]}, but ${this.next} step records precede it (file corrupted)`);
    }
    if (this.next !== h.steps) {
      throw new Error(`${where}: the file holds ${this.next} steps, the header declares ${h.steps}`);
    }
    const end = at + RECORD_HEADER_BYTES;
    if (end !== this.fileBytes) {
      throw new Error(`${where}: ${this.fileBytes - end} unexpected bytes after the end record`);
    }
    this.pos = end;
    this.done = true;
    return null;
  }

  /**
   * Make bytes [pos, pos + n) available in the buffer; returns how many are (fewer only at the end
   * of the file). Moves the unread tail to the front of the buffer, which invalidates older views.
   */
  private ensure(n: number): number {
    const fd = this.fd;
    if (fd === null) throw new Error(`${this.path}: the reader is closed`);
    const pos = this.pos;
    if (pos >= this.bufStart && pos + n <= this.bufEnd) return n;
    const avail = Math.min(n, this.fileBytes - pos);
    if (pos < this.bufStart || pos > this.bufEnd) {
      this.bufStart = this.bufEnd = pos;
    } else if (pos > this.bufStart) {
      this.u8.copyWithin(0, pos - this.bufStart, this.bufEnd - this.bufStart);
      this.bufStart = pos;
    }
    if (avail > this.buf.byteLength) {
      const keep = this.bufEnd - this.bufStart;
      const old = this.u8;
      this.buf = new ArrayBuffer(Math.ceil((avail * 1.25) / 64) * 64);
      this.u8 = new Uint8Array(this.buf);
      this.u32 = new Uint32Array(this.buf);
      this.i32 = new Int32Array(this.buf);
      this.f32 = new Float32Array(this.buf);
      this.u8.set(old.subarray(0, keep), 0);
    }
    const filled = this.bufEnd - this.bufStart;
    const room = Math.min(this.buf.byteLength - filled, this.fileBytes - this.bufEnd);
    if (room > 0) {
      const got = readExactly(fd, this.u8, filled, room, this.bufEnd);
      this.bufEnd += got;
    }
    return Math.min(avail, this.bufEnd - pos);
  }
}

/** Open a trace for streaming reads: checks the preamble and header now, records as they are read. */
export function openTrace(path: string, options?: TraceReaderOptions): TraceReader {
  return new TraceReader(path, options);
}
