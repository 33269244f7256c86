/** What the run measures per decode step (hil-steps.csv's columns). */
export interface MeasuredStep {
  step: number;
  latency_us: number;
  compute_us: number;
  stall_us: number;
  stall_wait_us: number;
  host_gap_us: number;
  /**
   * host wall time spent issuing the step's ops (the lowered list, its waits for file requests and
   * bounce slots included); where it is longer than the step, the GPU went at the host's pace
   */
  host_issue_us: number;
  /** of host_issue_us, the time the host waited for the compute stream (the plan's hostWaitCompute ops) */
  host_wait_compute_us: number;
  transfer_us: number;
  /** file-tier time of the step: file_read_us + file_write_us */
  file_us: number;
  /** time of the step's read batches on the file tier's I/O threads (batched reads: each batch's time; per-request reads: the sum of the requests' times) */
  file_read_us: number;
  /** the step's file writes, each request's own time summed (they run beside the reads) */
  file_write_us: number;
  /**
   * host time of the step spent before its file requests could be issued: waiting for the memory
   * stream (a copy that last used the request's DRAM bounce slot) and for earlier writes from the slot;
   * the file tier is idle while the host waits there unless earlier requests are still in flight
   */
  file_sync_us: number;
  /** how many of those waits synchronized the memory stream */
  file_syncs: number;
  /**
   * the host's wall time at its read joins: from handing each batch to the file tier to going on after
   * it (file_read_us plus the host's own time around the batches)
   */
  file_join_us: number;
  bytes: Record<string, number>;
  /**
   * with RunPlanOptions.waitMarks: time the memory stream stood at its waits on compute-stream
   * fences (event before and after each wait; the second completes when the fence has), the number
   * of such waits, and the memory stream's direction switches (H2D <-> D2H copies, counted from the plan)
   */
  mem_wait_us?: number;
  mem_waits?: number;
  mem_dir_switches?: number;
}
