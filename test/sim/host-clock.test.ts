// The executor's host clock (gpu.issue_copy_us / issue_record_us / issue_kernel_us / issue_convert_us):
// the host issues every op in order, at most gpu.launch_queue_ops ops ahead of the GPU where that is
// given, and an op starts no earlier than it was issued.
// Timelines by hand on the tiny machine: a 64-byte copy takes 10 + 64 = 74 us, a layer's attention
// 64 us and its projections 1000 us.
import { describe, expect, it } from 'vitest';
import { SimExecutor } from '../../sim/sim-executor.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import type { MoveBatch } from '../../sim/executor.js';
import { tinyHardware, tinyLayerWork, tinyModel } from '../helpers/tiny.js';

function machine(issue: { copy?: number; record?: number; kernel?: number; attention?: number }, more: (hw: ReturnType<typeof tinyHardware>) => void = () => {}) {
  const hw = tinyHardware();
  if (issue.copy !== undefined) hw.gpu.issue_copy_us = issue.copy;
  if (issue.record !== undefined) hw.gpu.issue_record_us = issue.record;
  if (issue.kernel !== undefined) hw.gpu.issue_kernel_us = issue.kernel;
  if (issue.attention !== undefined) hw.gpu.issue_attention_us = issue.attention;
  more(hw);
  return new SimExecutor(hw, tinyModel, { traceSteps: 100 });
}
// three single-block copies into HBM: 3 x 10 us + 192 B = 222 us when the host keeps ahead
const fetch3: MoveBatch = { layer: 0, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [1, 2, 3], bytesFrom: 192, bytesTo: 192, reason: 'promote', runs: 3 };
/** one 64-byte block NVMe -> HBM and HBM -> NVMe */
const nvmeIn: MoveBatch = { layer: 0, fromTier: 2, toTier: 0, fromBits: 16, toBits: 16, blocks: [4], bytesFrom: 64, bytesTo: 64, reason: 'promote', runs: 1 };
const nvmeOut: MoveBatch = { ...nvmeIn, fromTier: 0, toTier: 2, reason: 'demote' };
/** `n` single-block copies DRAM -> HBM (64 B each) */
const fetch3Of = (n: number): MoveBatch => ({ ...fetch3, blocks: fetch3.blocks.slice(0, n), bytesFrom: 64 * n, bytesTo: 64 * n, runs: n });

describe('the host clock', () => {
  it('copies go at the host pace where the host is slower: the last one runs once issued', () => {
    const ex = machine({ copy: 100 });
    ex.beginStep(0);
    const done = ex.move(fetch3);
    ex.layer(tinyLayerWork(0), [done]);
    const t = ex.endStep();
    // issued at 100, 200, 300: the batch starts at 100 and its last copy runs 300..374
    expect(t.transfer_us).toBe(374 - 100);
    // attention 374..438, projections 438..1438
    expect(t.latency_us).toBe(1438);
    expect(t.stall_us).toBe(374);
  });

  it('where the host keeps ahead, only the first copy waits for its issue', () => {
    const ex = machine({ copy: 5 });
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), [ex.move(fetch3)]);
    const t = ex.endStep();
    expect(t.transfer_us).toBe(222); // 5..227
    expect(t.latency_us).toBe(227 + 64 + 1000);
    const none = machine({});
    none.beginStep(0);
    none.layer(tinyLayerWork(0), [none.move(fetch3)]);
    expect(none.endStep().latency_us).toBe(222 + 64 + 1000);
  });

  it('kernels start once launched, and the clock runs on across steps (the executor never waits for the GPU)', () => {
    const ex = machine({ kernel: 2000 });
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []);
    const t0 = ex.endStep();
    // attention launched at 2000 (2000..2064), projections at 4000 (4000..5000)
    expect(t0.latency_us).toBe(5000);
    expect(t0.compute_us).toBe(1064);
    expect(t0.stall_us).toBe(5000 - 1064);
    ex.beginStep(1);
    ex.layer(tinyLayerWork(0, { step: 1 }), []);
    const t1 = ex.endStep();
    // the host is at 4000 when step 1 begins at 5000: attention launched at 6000, projections at 8000 (8000..9000)
    expect(t1.latency_us).toBe(9000 - 5000);
  });

  it('an attention launch costs the host its own time (default: a kernel launch)', () => {
    const ex = machine({ kernel: 100, attention: 700 });
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []);
    // attention launched at 700 (700..764), projections at 800 (800..1800)
    expect(ex.endStep().latency_us).toBe(1800);
  });

  it('timing marks cost the host their records: two before the attention, one before the projections', () => {
    const ex = machine({ record: 30 });
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []);
    // attention issued at 60 (60..124); the projections at 90 start when the attention ends
    expect(ex.endStep().latency_us).toBe(124 + 1000);
  });

  it("a memory-stream batch costs the host a mark before and after its copies", () => {
    const ex = machine({ copy: 100, record: 7 });
    ex.beginStep(0);
    const done = ex.move(fetch3);
    ex.layer(tinyLayerWork(0), [done]);
    // copies issued at 107, 207, 307 (the last runs 307..381); the layer's marks at 314 + 7 + 7: attention issued at 328
    const t = ex.endStep();
    expect(t.transfer_us).toBe(381 - 107);
    expect(t.latency_us).toBe(381 + 64 + 1000);
  });

  it('a layer waiting on the memory stream costs the host a fence record and a wait (tail waits, as the HIL lowers them)', () => {
    const run = (tailWaits: boolean) => {
      const hw = tinyHardware();
      hw.gpu.issue_copy_us = 100;
      hw.gpu.issue_record_us = 200;
      const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100, tailWaits });
      ex.beginStep(0);
      const done = ex.move(fetch3);
      ex.layer(tinyLayerWork(0), [done]);
      return ex.endStep().latency_us;
    };
    // mark to 200, copies issued at 300, 400, 500 (500..574), mark to 700; the layer's marks to 1100, the
    // fence on the memory stream and the compute stream's wait on it to 1500: attention 1500..1564, a
    // mark to 1700, projections 1700..2700
    expect(run(true)).toBe(2700);
    // without tail waits the attention waits on the copies' own signals: no fence, attention 1100..1164,
    // projections 1300..2300
    expect(run(false)).toBe(2300);
  });

  it('(de)quantization kernels: the last one runs once launched', () => {
    const ex = machine({ kernel: 50 }, (hw) => (hw.gpu.convert_kernel_us = 1));
    ex.beginStep(0);
    // requantize two blocks in HBM 16 -> 4 bits: two kernels launched at 50 and 100, the second runs 100..101
    const done = ex.move({ layer: 0, fromTier: 0, toTier: 0, fromBits: 16, toBits: 4, blocks: [1, 2], bytesFrom: 128, bytesTo: 32, reason: 'demote', runs: 1 });
    ex.layer(tinyLayerWork(0), [done]);
    const t = ex.endStep();
    // attention launched at 150 (150..214), projections at 200 (214..1214)
    expect(t.latency_us).toBe(1214);
    expect(t.transfer_us).toBe(101 - 50);
  });

  it('a block conversion launch costs the host issue_convert_us (default: a kernel launch)', () => {
    const run = (convert?: number) => {
      const ex = machine({ kernel: 50 }, (hw) => {
        hw.gpu.convert_kernel_us = 1;
        if (convert !== undefined) hw.gpu.issue_convert_us = convert;
      });
      ex.beginStep(0);
      const done = ex.move({ layer: 0, fromTier: 0, toTier: 0, fromBits: 16, toBits: 4, blocks: [1, 2], bytesFrom: 128, bytesTo: 32, reason: 'demote', runs: 1 });
      ex.layer(tinyLayerWork(0), [done]);
      return ex.endStep();
    };
    // conversions launched at 200 and 400 (the second runs 400..401); attention launched at 450 (450..514),
    // projections at 500 (514..1514)
    const t = run(200);
    expect(t.transfer_us).toBe(401 - 200);
    expect(t.latency_us).toBe(1514);
    // without it, at the kernel launch's 50 us: launched at 50 and 100 (100..101), attention at 150
    expect(run().latency_us).toBe(150 + 64 + 1000);
  });

  it('launch_queue_ops: the host starts a step no more than that many ops ahead of the GPU', () => {
    const run = (queue?: number) => {
      const ex = machine({ kernel: 10 }, (hw) => {
        hw.gpu.convert_kernel_us = 1;
        hw.gpu.issue_convert_us = 10;
        hw.gpu.issue_record_us = 0;
        if (queue !== undefined) hw.gpu.launch_queue_ops = queue;
      });
      ex.beginStep(0);
      ex.layer(tinyLayerWork(0), []);
      const t0 = ex.endStep();
      ex.beginStep(1);
      const done = ex.move({ layer: 0, fromTier: 0, toTier: 0, fromBits: 16, toBits: 4, blocks: Array.from({ length: 100 }, (_, i) => i), bytesFrom: 6400, bytesTo: 1600, reason: 'demote', runs: 1 });
      ex.layer(tinyLayerWork(0, { step: 1 }), [done]);
      return [t0.latency_us, ex.endStep().latency_us];
    };
    // step 0: attention launched at 10 (10..74), projections at 20 (74..1074); six ops (three pairs of
    // marks at no cost, the two launches); the host is at 20 when the GPU ends the step at 1074
    // unbounded: 100 conversions launched at 30..1020 run 1074..1174 (the last ends at 1021 + 1 before
    // that); attention launched at 1030 runs 1174..1238, projections launched at 1040 run 1238..2238
    expect(run()).toEqual([1074, 2238 - 1074]);
    // 3 ops: the last 3 of step 0's 6 ops take half its 1074 us, so the host starts step 1 at 1074 - 537
    // = 537. Its memory stream waits behind the step barrier until 1074, and holds 3 ops: the barrier's
    // wait, the mark before the conversions and the first conversion (launched at 547). The host issues
    // the 2nd conversion only once the stream runs, from 1074: 99 more launched at 1084..2064, the last
    // runs 2064..2065; attention launched at 2074 (2074..2138), projections at 2084 (2138..3138)
    expect(run(3)).toEqual([1074, 3138 - 1074]);
    // 6 ops: the whole of step 0 may be queued, the host starts step 1 at 20; the barrier's wait, the mark
    // and 4 conversions (launched at 30..60) fill the memory stream's queue; the other 96 are launched
    // from 1074, at 1084..2034 (the last runs 2034..2035); attention at 2044 (..2108), projections at 2054
    // (2108..3108)
    expect(run(6)).toEqual([1074, 3108 - 1074]);
    // 200 ops: the conversions all fit in the queue: 30..1020, as unbounded
    expect(run(200)).toEqual([1074, 2238 - 1074]);
  });

  it('launch_queue_ops: behind a step barrier the memory stream takes that many ops, and the host issues the rest once the step starts', () => {
    const run = (queue?: number) => {
      const ex = machine({ copy: 100, kernel: 10 }, (hw) => {
        hw.gpu.issue_record_us = 0;
        if (queue !== undefined) hw.gpu.launch_queue_ops = queue;
      });
      ex.beginStep(0);
      ex.layer(tinyLayerWork(0), []);
      const t0 = ex.endStep();
      ex.beginStep(1);
      const blocks = Array.from({ length: 20 }, (_, i) => i);
      const done = ex.move({ layer: 0, fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks, bytesFrom: 20 * 64, bytesTo: 20 * 64, reason: 'promote', runs: 20 });
      ex.layer(tinyLayerWork(0, { step: 1 }), [done]);
      return [t0.latency_us, ex.endStep().latency_us];
    };
    // step 0 as above: 0..1074, the host at 20. Step 1's 20 copies (74 us each on the link) start when step
    // 0 ends. Unbounded: issued at 120..2020, they run back to back 1074..2554; attention launched at 2030
    // runs 2554..2618, projections 2618..3618
    expect(run()).toEqual([1074, 3618 - 1074]);
    // 6 ops: the host is not held back at the step's start (step 0 has 6), but the memory stream's queue
    // takes the barrier's wait, the mark before the batch and 4 copies (120..420); the 16 others are
    // issued from 1074, at 1174..2674, and the link, faster than the host, waits for each from the 13th
    // on (1974..2048 after its issue at 1974): the last runs 2674..2748; attention launched at 2684 runs
    // 2748..2812, projections 2812..3812
    expect(run(6)).toEqual([1074, 3812 - 1074]);
  });

  it('host_convert_us: a change of bits in a host tier waits for the memory stream to drain, then takes the host that long per block', () => {
    const run = (hostConvert?: number) => {
      const ex = machine({ copy: 100 }, (hw) => {
        if (hostConvert !== undefined) hw.gpu.host_convert_us = hostConvert;
      });
      ex.beginStep(0);
      const fetched = ex.move(fetch3);
      const converted = ex.move({ layer: 1, fromTier: 1, toTier: 1, fromBits: 8, toBits: 4, blocks: [7, 8], bytesFrom: 64, bytesTo: 32, reason: 'demote', runs: 1 });
      ex.layer(tinyLayerWork(0), [fetched]);
      return { t: ex.endStep(), converted };
    };
    // copies issued at 100, 200, 300 (the last runs 300..374); the host waits for them to end, then
    // converts two blocks: 374..1374; the attention, issued after that, runs 1374..1438, projections to 2438
    const { t, converted } = run(500);
    expect(t.latency_us).toBe(2438);
    expect(converted.dueAt).toBe(1374);
    // without it, a conversion on the memory stream after the copies: the attention issued at 300
    // waits only for the copies (374..438), projections to 1438
    expect(run().t.latency_us).toBe(1438);
  });

  it('host_convert_us between host tiers: the drain and the conversions come before the bytes move', () => {
    const ex = machine({ copy: 100 }, (hw) => (hw.gpu.host_convert_us = 500));
    ex.beginStep(0);
    ex.move(fetch3); // copies to 374
    // DRAM INT8 -> NVMe INT4: the host waits to 374, converts to 1374; the file write of 32 B follows on the
    // host's I/O stream (32 B at 0.5 B/us): 1374..1438
    const done = ex.move({ layer: 1, fromTier: 1, toTier: 2, fromBits: 8, toBits: 4, blocks: [7, 8], bytesFrom: 64, bytesTo: 32, reason: 'demote', runs: 1 });
    ex.layer(tinyLayerWork(0), [done]);
    const t = ex.endStep();
    expect(done.at).toBe(1438);
    expect(t.latency_us).toBe(1438 + 64 + 1000);
  });

  it('launch_queue_ops walks back over earlier steps, counting each step barrier among its step\'s ops', () => {
    const run = (queue?: number) => {
      const ex = machine({ kernel: 10 }, (hw) => {
        hw.gpu.convert_kernel_us = 1;
        hw.gpu.issue_convert_us = 30;
        hw.gpu.issue_record_us = 0;
        if (queue !== undefined) hw.gpu.launch_queue_ops = queue;
      });
      const lat: number[] = [];
      for (const step of [0, 1]) {
        ex.beginStep(step);
        ex.layer(tinyLayerWork(0, { step }), []);
        lat.push(ex.endStep().latency_us);
      }
      ex.beginStep(2);
      const done = ex.move({ layer: 0, fromTier: 0, toTier: 0, fromBits: 16, toBits: 4, blocks: Array.from({ length: 100 }, (_, i) => i), bytesFrom: 6400, bytesTo: 1600, reason: 'demote', runs: 1 });
      ex.layer(tinyLayerWork(0, { step: 2 }), [done]);
      lat.push(ex.endStep().latency_us);
      return lat;
    };
    // step 0: 6 ops, 0..1074 (host at 20); step 1: its barrier's 2 ops and 6 more, attention launched at 30
    // (1074..1138), projections at 40 (1138..2138): 8 ops, 1064 us. Step 2's 100 conversions take the host
    // 3000 us from where it starts it; unbounded at 40: the last launched at 3040 runs 3040..3041 (the
    // batch started at 2138), attention launched at 3050 (3050..3114), projections at 3060 (3114..4114)
    expect(run()).toEqual([1074, 1064, 4114 - 2138]);
    // 10 ops: step 1's 8 and 2 of step 0's 6 (a third of its 1074 us): a lead of 1422, the host from 716.
    // The memory stream waits behind step 2's barrier until 2138 and its queue holds 10 ops: the barrier's
    // wait, the mark and 8 conversions (launched at 746..956); the other 92 from 2138, at 2168..4898 (the
    // last runs 4898..4899); attention at 4908 (..4972), projections at 4918 (4972..5972)
    expect(run(10)).toEqual([1074, 1064, 5972 - 2138]);
    // 8 ops: step 1 alone (1064 us): the host from 1074; 6 conversions queued (1104..1254), 94 from 2138
    // (2168..4958); attention at 4968 (..5032), projections 5032..6032
    expect(run(8)).toEqual([1074, 1064, 6032 - 2138]);
    // 14 ops: both steps may be queued, the host from 40; 12 conversions queued (70..400), 88 from 2138
    // (2168..4778); attention at 4788 (..4852), projections 4852..5852
    expect(run(14)).toEqual([1074, 1064, 5852 - 2138]);
    // 200 ops: neither bound holds the host back
    expect(run(200)).toEqual([1074, 1064, 4114 - 2138]);
  });

  it('a promotion from a storage tier: the host joins the reads before it issues the copy and anything after it', () => {
    const ex = machine({ copy: 100, kernel: 50 });
    ex.beginStep(0);
    // NVMe -> HBM, 64 B: read 0..128 (0.5 B/us), the host waits for it, copy issued at 228 (228..302)
    const done = ex.move(nvmeIn);
    // a layer that does not wait for the copy: attention launched at 278 (278..342), projections at 328 (342..1342)
    ex.layer(tinyLayerWork(0), []);
    const t = ex.endStep();
    expect(t.latency_us).toBe(1342);
    expect(done.at).toBe(302);
    expect(t.bytes['nvme:nvme->dram']).toBe(64);
    expect(t.bytes['pcie:dram->hbm']).toBe(64);
    // without issue costs there is no host clock: the copy follows the read (128..202) and the layer runs from 0
    const free = machine({});
    free.beginStep(0);
    const d0 = free.move(nvmeIn);
    free.layer(tinyLayerWork(0), []);
    expect(free.endStep().latency_us).toBe(1064);
    expect(d0.at).toBe(202);
  });

  it('file_batch_host_us: the host spends that long on each read batch it joins', () => {
    const ex = machine({ copy: 100, kernel: 50 }, (hw) => (hw.gpu.file_batch_host_us = 40));
    ex.beginStep(0);
    // read 0..128, the host joins it and is at 168; copy issued at 268 (268..342)
    const done = ex.move(nvmeIn);
    // attention launched at 318 (318..382), projections at 368 (382..1382)
    ex.layer(tinyLayerWork(0), []);
    expect(ex.endStep().latency_us).toBe(1382);
    expect(done.at).toBe(342);
    // writes are not joined: a demotion costs the host nothing more
    const w = machine({ copy: 100, kernel: 50 }, (hw) => (hw.gpu.file_batch_host_us = 40));
    w.beginStep(0);
    w.move(nvmeOut);
    w.layer(tinyLayerWork(0), []);
    expect(w.endStep().latency_us).toBe(1288);
    // it acts on the host clock: a profile without issue costs is refused, naming the field
    const hw = tinyHardware();
    hw.gpu.file_batch_host_us = 40;
    expect(() => validateProfile(hw, 'p.json')).toThrow('p.json: gpu.file_batch_host_us needs the host clock');
  });

  it('a demotion to a storage tier: the host synchronizes the memory stream before the writes and does not wait for them', () => {
    const ex = machine({ copy: 100, kernel: 50 });
    ex.beginStep(0);
    // HBM -> DRAM slot issued at 100 (100..174), the host waits for it, the write 174..302 from there
    const done = ex.move(nvmeOut);
    // attention launched at 224 (224..288), projections at 274 (288..1288)
    ex.layer(tinyLayerWork(0), []);
    const t = ex.endStep();
    expect(t.latency_us).toBe(1288);
    expect(done.at).toBe(302);
    expect(t.bytes['nvme:dram->nvme']).toBe(64);
  });

  it('a storage read into DRAM: the file requests start when the host reaches them, and the host waits for them', () => {
    const ex = machine({ copy: 100, kernel: 50 });
    ex.beginStep(0);
    // a copy into HBM issued at 100 (100..174), then NVMe -> DRAM 64 B read from 100 (the host is there): 100..228
    ex.move(fetch3Of(1));
    const read = ex.move({ layer: 0, fromTier: 2, toTier: 1, fromBits: 16, toBits: 16, blocks: [5], bytesFrom: 64, bytesTo: 64, reason: 'promote', runs: 1 });
    expect(read.at).toBe(228);
    // the attention launched at 278 (278..342), projections at 328 (342..1342)
    ex.layer(tinyLayerWork(0), []);
    expect(ex.endStep().latency_us).toBe(1342);
  });

  it('host_convert_us from a storage tier: the blocks are read into DRAM first and the host waits for the reads', () => {
    const ex = machine({ copy: 100 }, (hw) => (hw.gpu.host_convert_us = 500));
    ex.beginStep(0);
    // NVMe INT8 -> DRAM INT4: 64 B read at 0.5 B/us (0..128), then two conversions on the host (128..1128)
    const done = ex.move({ layer: 1, fromTier: 2, toTier: 1, fromBits: 8, toBits: 4, blocks: [7, 8], bytesFrom: 64, bytesTo: 32, reason: 'promote', runs: 1 });
    expect(done.dueAt).toBe(1128);
    ex.layer(tinyLayerWork(0), [done]);
    const t = ex.endStep();
    // the attention, launched once the host is done, 1128..1192; projections to 2192
    expect(t.latency_us).toBe(2192);
    expect(t.bytes['nvme:nvme->dram']).toBe(64);
    expect(t.bytes['nvme:dram->nvme']).toBe(0);
  });

  it('host_convert_us between DRAM and CXL: the host writes the converted blocks into their slots, and no byte crosses the link', () => {
    const ex = machine({ copy: 100 }, (hw) => {
      hw.gpu.host_convert_us = 500;
      hw.tiers.push({ name: 'cxl', kind: 'cxl', capacity_GiB: 1, read_GBps: 1000, write_GBps: 1000, read_latency_us: 0, write_latency_us: 0 });
      hw.links.push({ name: 'cxl', a: 'dram', b: 'cxl', a_to_b: { alpha_us: 1, GBps: 0.001 }, b_to_a: { alpha_us: 1, GBps: 0.001 }, copy_engines: 1 });
    });
    ex.beginStep(0);
    const fetched = ex.move(fetch3); // copies to 374
    const done = ex.move({ layer: 1, fromTier: 1, toTier: 3, fromBits: 8, toBits: 4, blocks: [7, 8], bytesFrom: 64, bytesTo: 32, reason: 'demote', runs: 1 });
    expect(done.dueAt).toBe(1374);
    ex.layer(tinyLayerWork(0), [fetched]);
    const t = ex.endStep();
    expect(t.latency_us).toBe(2438);
    expect(t.bytes['cxl:dram->cxl']).toBe(0);
  });

  it('host_convert_us with the memory stream idle: the host converts from where it is', () => {
    const ex = machine({ copy: 100 }, (hw) => (hw.gpu.host_convert_us = 500));
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []); // attention 0..64, projections 64..1064
    const done = ex.move({ layer: 1, fromTier: 1, toTier: 1, fromBits: 8, toBits: 4, blocks: [7, 8], bytesFrom: 64, bytesTo: 32, reason: 'demote', runs: 1 });
    expect(done.dueAt).toBe(1000);
    ex.layer(tinyLayerWork(1), [done]);
    // layer 1's attention, launched at 1000, waits for the projections: 1064..1128, its projections to 2128
    expect(ex.endStep().latency_us).toBe(2128);
  });

  it('projections launched after the attention wait for the host when it is behind', () => {
    const ex = machine({ record: 30, kernel: 200 });
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []);
    // marks to 60, attention launched at 260 (260..324), a mark to 290, projections launched at 490 (490..1490)
    expect(ex.endStep().latency_us).toBe(1490);
  });

  it('the mark after a batch delays the next batch', () => {
    const ex = machine({ copy: 100, record: 7 });
    ex.beginStep(0);
    ex.move(fetch3); // mark to 7, copies at 107, 207, 307 (307..381), mark to 314
    const one: MoveBatch = { ...fetch3, blocks: [5], bytesFrom: 64, bytesTo: 64, runs: 1 };
    const done = ex.move(one); // mark to 321, its copy issued at 421 (421..495), mark to 428
    ex.layer(tinyLayerWork(0), [done]);
    expect(ex.endStep().latency_us).toBe(495 + 64 + 1000);
  });

  it("with weight streaming the projections are launched after the layer's weight copies are issued", () => {
    const hw = tinyHardware();
    hw.gpu.issue_copy_us = 3000;
    hw.gpu.issue_kernel_us = 1;
    hw.gpu.issue_record_us = 5;
    const ex = new SimExecutor(hw, tinyModel, { traceSteps: 100, weightStreaming: { tier: 'dram', buffers: 2 } });
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []);
    // marks to 10, attention launched at 11 (11..75), a mark to 16; the weight copies of layers 0 and 1, each
    // between two marks, issued at 3021 and 6031 (layer 0's 3021..4031: 10 + 1000 B), marks to 6036; the
    // projections launched at 6037 (6037..7037)
    expect(ex.endStep().latency_us).toBe(7037);
  });

  it("a host-bound last copy beside a GEMV goes at the under-compute pace ('gemv' pricing)", () => {
    const ex = machine({ copy: 300 }, (hw) => {
      hw.gpu.copy_under_compute = 'gemv';
      for (const d of [hw.links[0].a_to_b, hw.links[0].b_to_a]) Object.assign(d, { alpha_under_compute_us: 40, GBps_under_compute: 0.0005 });
    });
    ex.beginStep(0);
    ex.layer(tinyLayerWork(0), []); // attention 0..64, projections 64..1064
    const done = ex.move(fetch3); // copies issued at 300, 600, 900
    ex.layer(tinyLayerWork(1), [done]);
    // the last copy from 900: 74 us of work at 74 / 168 of the pace inside the projections (to 1064), then 1.76 us
    const end = 1064 + (74 - (164 * 74) / 168);
    expect(ex.endStep().latency_us).toBeCloseTo(end + 64 + 1000, 9);
  });

  it('a requantization costs the host a mark before and after its kernels', () => {
    const ex = machine({ kernel: 50, record: 5 }, (hw) => (hw.gpu.convert_kernel_us = 1));
    ex.beginStep(0);
    // mark to 5, kernels launched at 55 and 105 (the second runs 105..106), mark to 110
    const done = ex.move({ layer: 0, fromTier: 0, toTier: 0, fromBits: 16, toBits: 4, blocks: [1, 2], bytesFrom: 128, bytesTo: 32, reason: 'demote', runs: 1 });
    ex.layer(tinyLayerWork(0), [done]);
    // marks to 120, attention launched at 170 (170..234), a mark to 175, projections launched at 225 (234..1234)
    expect(ex.endStep().latency_us).toBe(1234);
  });

  it('the profile checks the issue costs', () => {
    const hw = tinyHardware();
    (hw.gpu as unknown as Record<string, unknown>).issue_copy_us = -1;
    expect(() => validateProfile(hw, 'tiny.json')).toThrow(/issue_copy_us/);
    const q = tinyHardware();
    (q.gpu as unknown as Record<string, unknown>).launch_queue_ops = 2.5;
    expect(() => validateProfile(q, 'tiny.json')).toThrow(/launch_queue_ops must be an integer >= 1/);
  });
});
