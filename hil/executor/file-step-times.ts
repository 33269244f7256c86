/**
 * Per decode step, the host's times (ms): the file tier's requests as the host saw them (all
 * requests, reads, waits before issuing, and memory-stream syncs among those waits), the host's wall
 * time at its read joins (from handing a batch to the tier to going on after it), and the wall time
 * the host took to issue the step's ops (its waits included).
 */
export class FileStepTimes {
  readonly fileMs: Float64Array;
  readonly issueMs: Float64Array;
  readonly readMs: Float64Array;
  readonly syncMs: Float64Array;
  readonly joinMs: Float64Array;
  readonly computeWaitMs: Float64Array;
  readonly syncs: Uint32Array;

  constructor(steps: number) {
    this.fileMs = new Float64Array(steps);
    this.issueMs = new Float64Array(steps);
    this.readMs = new Float64Array(steps);
    this.syncMs = new Float64Array(steps);
    this.joinMs = new Float64Array(steps);
    this.computeWaitMs = new Float64Array(steps);
    this.syncs = new Uint32Array(steps);
  }
}
