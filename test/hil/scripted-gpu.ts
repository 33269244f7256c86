// A scripted machine for the benches' accounting: streams whose ops run back to back on the device,
// a host clock that each call advances by its launch cost (ms). An op starts when the host has
// queued it and its stream is free; an event completes when its stream reaches it; a stream that
// waits for an event goes on at the later of that event and its own work; recording an event holds
// its stream for `eventMs`. Ops never slow each other unless the test says so through the durations
// it gives.
import type { NativeBackend } from '../../hil/addon-types.js';

export class ScriptedGpu {
  host = 0;
  private readonly busy = new Map<string, number>();
  private nextId = 1;
  private readonly events = new Map<number, number>();
  readonly gates: number[] = []; // GEMVs per gemv() call
  constructor(
    private readonly gemvMs: number,
    private readonly launchMs: number,
    private readonly eventMs = 0,
  ) {}
  private busyOf(stream: string): number {
    return this.busy.get(stream) ?? 0;
  }
  private run(stream: string, hostMs: number, deviceMs: number): void {
    this.host += hostMs;
    this.busy.set(stream, Math.max(this.busyOf(stream), this.host) + deviceMs);
  }
  alloc(): number {
    return this.nextId++;
  }
  free(): void {}
  write(): void {}
  createEvent(): number {
    const id = this.nextId++;
    this.events.set(id, NaN);
    return id;
  }
  destroyEvent(id: number): void {
    if (!this.events.delete(id)) throw new Error(`event ${id} destroyed twice or never made`);
  }
  record(stream: string, e: number): void {
    if (!this.events.has(e)) throw new Error(`record: event ${e} not made`);
    const t = Math.max(this.busyOf(stream), this.host);
    this.busy.set(stream, t + this.eventMs);
    this.events.set(e, t);
  }
  waitEvent(stream: string, e: number): void {
    const t = this.events.get(e);
    if (t === undefined || Number.isNaN(t)) throw new Error(`waitEvent: event ${e} never recorded`);
    this.busy.set(stream, Math.max(this.busyOf(stream), this.host, t));
  }
  gemv(stream: string, _g: unknown, reps = 1): void {
    this.gates.push(reps);
    for (let i = 0; i < reps; i++) this.run(stream, this.launchMs, this.gemvMs);
  }
  /** a trial's op: `hostMs` to queue it, `deviceMs` to run it on `stream` */
  op(hostMs: number, deviceMs: number, stream = 'compute'): void {
    this.run(stream, hostMs, deviceMs);
  }
  async synchronize(): Promise<void> {
    this.host = Math.max(this.host, ...this.busy.values());
  }
  elapsedMs(a: number, b: number): number {
    return this.events.get(b)! - this.events.get(a)!;
  }
  /** events made and not destroyed */
  liveEvents(): number {
    return this.events.size;
  }
  asBackend(): NativeBackend {
    return this as unknown as NativeBackend;
  }
}
