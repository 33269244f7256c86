/**
 * TraceWriter: writes a .kvt attention trace (format in traces/FORMAT.md) step by step.
 * It writes to `path + '.partial'` and renames on close(), after the end record, so a crash never
 * leaves a file under the final name; every step is checked before it is written (StepChecker).
 */
import * as fs from 'node:fs';
import {
  END_MAGIC,
  FILE_MAGIC,
  PREAMBLE_BYTES,
  RECORD_HEADER_BYTES,
  STEP_MAGIC,
  assertLittleEndian,
  layerWords,
} from './binary-layout.js';
import { wordChecksum } from './checksum.js';
import { TRACE_VERSION, type TraceHeader, type TraceStep } from './format.js';
import { StepChecker, type StepCheckOptions } from './step-check.js';
import { checkTraceHeader, encodeTraceHeader } from './trace-header.js';

export interface TraceWriterOptions extends StepCheckOptions {
  /** replace an existing file at `path` (default: refuse) */
  overwrite?: boolean;
  /** bytes buffered before a write to the file; default 1 MiB */
  bufferBytes?: number;
}

export class TraceWriter {
  readonly path: string;
  readonly partialPath: string;
  readonly header: TraceHeader;
  private readonly overwrite: boolean;
  private readonly checker: StepChecker;
  private readonly flushBytes: number;
  private fd: number | null;
  private buf: ArrayBuffer;
  private u8: Uint8Array;
  private u32: Uint32Array;
  private i32: Int32Array;
  private f32: Float32Array;
  /** words filled in buf */
  private fill = 0;
  private written = 0;
  private bytes = 0;

  constructor(path: string, header: TraceHeader, options: TraceWriterOptions = {}) {
    assertLittleEndian();
    this.path = path;
    this.partialPath = `${path}.partial`;
    this.overwrite = options.overwrite ?? false;
    // check what the reader will see: the header after a JSON round trip
    const json = encodeTraceHeader(checkTraceHeader(header, path));
    this.header = checkTraceHeader(JSON.parse(Buffer.from(json).toString('utf8')), path);
    this.checker = new StepChecker(this.header, options);
    this.flushBytes = Math.max(4096, options.bufferBytes ?? 1 << 20);
    if (!this.overwrite && fs.existsSync(path)) {
      throw new Error(`${path}: file exists; pass { overwrite: true } to replace it`);
    }
    this.buf = new ArrayBuffer(this.flushBytes * 2);
    this.u8 = new Uint8Array(this.buf);
    this.u32 = new Uint32Array(this.buf);
    this.i32 = new Int32Array(this.buf);
    this.f32 = new Float32Array(this.buf);
    this.fd = fs.openSync(this.partialPath, 'w');
    const pre = new Uint8Array(new ArrayBuffer(PREAMBLE_BYTES + json.length));
    const preWords = new Uint32Array(pre.buffer);
    const preInts = new Int32Array(pre.buffer);
    pre.set(FILE_MAGIC, 0);
    preWords[2] = TRACE_VERSION;
    preWords[3] = json.length;
    pre.set(json, PREAMBLE_BYTES);
    preWords[4] = wordChecksum(preInts, PREAMBLE_BYTES / 4, pre.length / 4);
    this.writeOut(pre, pre.length);
  }

  /** Steps written so far. */
  get stepsWritten(): number {
    return this.written;
  }

  /** Check and append the next step (steps are numbered 0, 1, 2, ...). */
  writeStep(step: TraceStep): void {
    const fd = this.openFd();
    const h = this.header;
    if (this.written >= h.steps) {
      throw new Error(`${this.path}: step ${this.written}: the header declares ${h.steps} steps; no more can be written`);
    }
    this.checker.check(step, this.written, `${this.path}: step ${this.written}`);
    let payloadWords = 0;
    for (const a of step.layers) payloadWords += layerWords(h.encoding, a.mass.length, a.norms.length);
    const recordWords = RECORD_HEADER_BYTES / 4 + payloadWords;
    if ((this.fill + recordWords) * 4 > this.buf.byteLength) this.flush(fd);
    if (recordWords * 4 > this.buf.byteLength) this.grow(recordWords * 4);
    const u32 = this.u32;
    const f32 = this.f32;
    const start = this.fill;
    u32[start] = STEP_MAGIC;
    u32[start + 1] = this.written;
    u32[start + 2] = payloadWords * 4;
    let w = start + 4;
    for (const a of step.layers) {
      const listed = a.mass.length;
      u32[w] = a.nBlocks;
      u32[w + 1] = listed;
      f32[w + 2] = a.remainder;
      u32[w + 3] = a.normFrom;
      u32[w + 4] = a.norms.length;
      w += 5;
      if (h.encoding === 'topk') {
        u32.set(a.idx!, w);
        w += listed;
      }
      f32.set(a.mass, w);
      w += listed;
      f32.set(a.norms, w);
      w += a.norms.length;
    }
    u32[start + 3] = wordChecksum(this.i32, start + 4, w);
    this.fill = w;
    this.written++;
    if (this.fill * 4 >= this.flushBytes) this.flush(fd);
  }

  /** Write the end record, close, and rename `.partial` to the final name. Needs all header.steps steps. */
  close(): void {
    const fd = this.openFd();
    if (this.written !== this.header.steps) {
      throw new Error(
        `${this.path}: close() after ${this.written} of ${this.header.steps} steps; write the rest, or abort() ` +
          `(the incomplete ${this.partialPath} is left as it is)`,
      );
    }
    if (this.fill + 4 > this.u32.length) this.flush(fd);
    const u32 = this.u32;
    u32[this.fill] = END_MAGIC;
    u32[this.fill + 1] = this.written;
    u32[this.fill + 2] = 0;
    u32[this.fill + 3] = 0; // checksum of an empty payload
    this.fill += 4;
    this.flush(fd);
    fs.closeSync(fd);
    this.fd = null;
    if (!this.overwrite && fs.existsSync(this.path)) {
      throw new Error(`${this.path}: file appeared while writing; the trace is kept as ${this.partialPath}`);
    }
    fs.renameSync(this.partialPath, this.path);
  }

  /** Close and delete the `.partial` file; the final path is never touched. */
  abort(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
    fs.rmSync(this.partialPath, { force: true });
  }

  /** Total bytes written to the file so far. */
  get bytesWritten(): number {
    return this.bytes + this.fill * 4;
  }

  private openFd(): number {
    if (this.fd === null) throw new Error(`${this.path}: the writer is closed`);
    return this.fd;
  }

  private flush(fd: number): void {
    if (this.fill === 0) return;
    this.writeOutFd(fd, this.u8, this.fill * 4);
    this.fill = 0;
  }

  private grow(bytes: number): void {
    this.buf = new ArrayBuffer(Math.ceil(bytes / 4096) * 4096);
    this.u8 = new Uint8Array(this.buf);
    this.u32 = new Uint32Array(this.buf);
    this.i32 = new Int32Array(this.buf);
    this.f32 = new Float32Array(this.buf);
  }

  private writeOut(bytes: Uint8Array, n: number): void {
    this.writeOutFd(this.openFd(), bytes, n);
  }

  private writeOutFd(fd: number, bytes: Uint8Array, n: number): void {
    let off = 0;
    while (off < n) off += fs.writeSync(fd, bytes, off, n - off);
    this.bytes += n;
  }
}
