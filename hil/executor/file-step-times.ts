/** Per decode step, the file tier's times as the host saw them (ms): all requests, reads, waits before issuing, and memory-stream syncs among those waits. */
export class FileStepTimes {
  readonly fileMs: Float64Array;
  readonly readMs: Float64Array;
  readonly syncMs: Float64Array;
  readonly syncs: Uint32Array;

  constructor(steps: number) {
    this.fileMs = new Float64Array(steps);
    this.readMs = new Float64Array(steps);
    this.syncMs = new Float64Array(steps);
    this.syncs = new Uint32Array(steps);
  }
}
