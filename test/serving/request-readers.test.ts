import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledTracePath, resolveRequestsArg } from '../../traces/requests/bundled-traces.js';
import { parseAzureTimestamp } from '../../traces/requests/parse-azure.js';
import { detectRequestFormat, parseRequestTrace, readRequestTrace } from '../../traces/requests/read-request-trace.js';
import { TraceFormatError } from '../../traces/requests/trace-format-error.js';

const samples = join(import.meta.dirname, '../../traces/requests/data/samples');

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

describe('Mooncake JSONL reader', () => {
  const text = [
    '{"timestamp": 0, "input_length": 1000, "output_length": 10, "hash_ids": [0, 1]}',
    '',
    '{"timestamp": 250.5, "input_length": 512, "output_length": 0, "hash_ids": [0], "extra": "ignored"}',
    '{"timestamp": 900, "input_length": 7, "output_length": 3, "hash_ids": []}',
    '',
  ].join('\n');

  it('reads requests with their fields, ids and source lines', () => {
    const t = parseRequestTrace(text, 'm.jsonl');
    expect(t.format).toBe('mooncake');
    expect(t.block_tokens).toBe(512);
    expect(t.skipped).toBe(0);
    expect(t.reordered).toBe(false);
    expect(t.requests).toEqual([
      { id: 0, line: 1, arrival_ms: 0, input_tokens: 1000, output_tokens: 10, hash_ids: [0, 1] },
      { id: 1, line: 3, arrival_ms: 250.5, input_tokens: 512, output_tokens: 0, hash_ids: [0] },
      { id: 2, line: 4, arrival_ms: 900, input_tokens: 7, output_tokens: 3, hash_ids: [] },
    ]);
  });

  it('orders out-of-order arrivals stably and says so', () => {
    const t = parseRequestTrace(
      [
        '{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [1]}',
        '{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [2]}',
        '{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [3]}',
      ].join('\n'),
      'u.jsonl',
    );
    expect(t.reordered).toBe(true);
    expect(t.requests.map((r) => [r.id, r.line, r.hash_ids[0]])).toEqual([
      [0, 2, 2],
      [1, 1, 1],
      [2, 3, 3],
    ]);
  });

  const bad: [string, string, string][] = [
    ['{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0]', '', 'invalid JSON'],
    ['[1, 2]', '', 'expected a JSON object'],
    ['{"input_length": 10, "output_length": 1, "hash_ids": [0]}', 'timestamp', 'missing'],
    ['{"timestamp": -1, "input_length": 10, "output_length": 1, "hash_ids": [0]}', 'timestamp', 'must be >= 0'],
    ['{"timestamp": 0, "input_length": "ten", "output_length": 1, "hash_ids": [0]}', 'input_length', 'expected a number'],
    ['{"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []}', 'input_length', 'must be >= 1'],
    ['{"timestamp": 0, "input_length": 10, "output_length": 1.5, "hash_ids": [0]}', 'output_length', 'expected an integer'],
    ['{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": 3}', 'hash_ids', 'expected an array'],
    ['{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [0, 1, 2]}', 'hash_ids', '3 blocks for 513 input tokens (at most 2'],
    ['{"timestamp": 0, "input_length": 1000, "output_length": 1, "hash_ids": [0, -4]}', 'hash_ids[1]', 'non-negative integer'],
    ['{"timestamp": 0, "input_length": 1000, "output_length": 1, "hash_ids": [7, 7]}', 'hash_ids[1]', 'repeats block id 7'],
  ];
  it.each(bad)('rejects %s naming file, line and field', (line, field, detail) => {
    const good = '{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0]}';
    const e = thrown(() => parseRequestTrace(`${good}\n${good}\n${line}\n${good}`, 'bad.jsonl'));
    expect(e).toBeInstanceOf(TraceFormatError);
    const f = e as TraceFormatError;
    expect([f.file, f.line, f.field]).toEqual(['bad.jsonl', 3, field]);
    expect(f.message.startsWith('bad.jsonl:3: ')).toBe(true);
    expect(f.message).toContain(detail);
    if (field !== '') expect(f.message).toContain(`field "${field}"`);
  });

  it('skips and counts malformed lines when asked, listing where they were', () => {
    const good = (ts: number) => `{"timestamp": ${ts}, "input_length": 10, "output_length": 1, "hash_ids": [${ts}]}`;
    const lines = [good(0), 'not json', good(1), '{"timestamp": 2}', good(3)];
    const t = parseRequestTrace(lines.join('\n'), 'skip.jsonl', { skipMalformed: true });
    expect(t.requests.map((r) => r.line)).toEqual([1, 3, 5]);
    expect(t.skipped).toBe(2);
    expect(t.skipped_lines.map((s) => s.line)).toEqual([2, 4]);
    expect(t.skipped_lines[1].message).toContain('field "input_length": missing');
  });

  it('refuses a trace with no request at all, even when skipping', () => {
    expect(thrown(() => parseRequestTrace('\n\n', 'empty.jsonl')).message).toBe('empty.jsonl: no requests in the trace');
    expect(thrown(() => parseRequestTrace('x\ny\n', 'junk.jsonl', { skipMalformed: true })).message).toBe(
      'junk.jsonl: no requests in the trace (2 malformed lines skipped)',
    );
  });

  it('reads the bundled traces with the published averages', () => {
    const conv = readRequestTrace(resolveRequestsArg('mooncake:conversation'));
    const syn = readRequestTrace(bundledTracePath('synthetic'));
    expect(conv.requests.length).toBe(12031);
    expect(syn.requests.length).toBe(3993);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    // Mooncake FAST'25 Table 2: average input 12,035 / 15,325, output 343 / 149
    expect(Math.round(mean(conv.requests.map((r) => r.input_tokens)))).toBe(12035);
    expect(Math.round(mean(syn.requests.map((r) => r.input_tokens)))).toBe(15325);
    expect(Math.round(mean(conv.requests.map((r) => r.output_tokens)))).toBe(343);
    expect(Math.round(mean(syn.requests.map((r) => r.output_tokens)))).toBe(149);
  });
});

describe('Azure and BurstGPT CSV readers', () => {
  it('reads the hand-made Azure sample, arrivals relative to the first', () => {
    const t = readRequestTrace(join(samples, 'azure-sample.csv'));
    expect(t.format).toBe('azure');
    expect(t.requests.length).toBe(8);
    expect(t.requests[0]).toEqual({ id: 0, line: 2, arrival_ms: 0, input_tokens: 374, output_tokens: 44, hash_ids: [] });
    // 18:15:50.9951690 - 18:15:46.6805900 = 4.314579 s (to 0.1 us: the format's own resolution)
    expect(t.requests[1].arrival_ms).toBeCloseTo(4314.579, 4);
    expect(t.requests[7]).toMatchObject({ line: 9, input_tokens: 65, output_tokens: 1 });
    expect(t.requests[7].arrival_ms).toBeCloseTo(8419.41, 4);
  });

  it('parses Azure timestamps to the sub-millisecond', () => {
    expect(parseAzureTimestamp('2020-01-01 00:00:01.5')).toBe(1500);
    expect(parseAzureTimestamp('2020-01-02T00:00:00')).toBe(86_400_000);
    expect(parseAzureTimestamp('2023-11-16 18:15:46.6805900') - parseAzureTimestamp('2023-11-16 18:15:46')).toBeCloseTo(680.59, 4);
    expect(parseAzureTimestamp('2023-13-01 00:00:00')).toBeNaN();
    expect(parseAzureTimestamp('yesterday')).toBeNaN();
  });

  it('names the line and field of a bad Azure row', () => {
    const text = 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,10,2\n2023-11-16 18:15:47,-3,2\n';
    const e = thrown(() => parseRequestTrace(text, 'az.csv')) as TraceFormatError;
    expect(e.message).toBe('az.csv:3: field "ContextTokens": must be >= 1, got -3');
    const e2 = thrown(() => parseRequestTrace('TIMESTAMP,ContextTokens,GeneratedTokens\nnoon,1,1\n', 'az.csv'));
    expect(e2.message).toContain('az.csv:2: field "TIMESTAMP"');
    const e3 = thrown(() => parseRequestTrace('TIMESTAMP,Context,GeneratedTokens\n', 'az.csv', { format: 'azure' }));
    expect(e3.message).toContain('az.csv:1: field "ContextTokens": missing column in the header');
  });

  it('reads the hand-made BurstGPT sample, keeping failed requests', () => {
    const t = readRequestTrace(join(samples, 'burstgpt-sample.csv'));
    expect(t.format).toBe('burstgpt');
    expect(t.requests.map((r) => [r.arrival_ms, r.input_tokens, r.output_tokens])).toEqual([
      [5000, 472, 18],
      [45000, 1087, 0],
      [118000, 417, 217],
      [134000, 1360, 120],
      [160000, 35, 7],
      [160000, 2048, 512],
      [201000, 900, 301],
    ]);
  });

  it('checks the number of fields and quoted fields in CSV rows', () => {
    const head = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n';
    const e = thrown(() => parseRequestTrace(`${head}5,ChatGPT,10,2,12\n`, 'b.csv'));
    expect(e.message).toBe('b.csv:2: expected 6 comma-separated fields, got 5');
    const t = parseRequestTrace(`${head}5,"GPT-4, ""big""",10,2,12,Conversation log\n`, 'b.csv');
    expect(t.requests[0]).toMatchObject({ arrival_ms: 5000, input_tokens: 10, output_tokens: 2 });
    const e2 = thrown(() => parseRequestTrace(`${head}5,"GPT-4,10,2,12,x\n`, 'b.csv'));
    expect(e2.message).toBe('b.csv:2: unterminated quoted field');
  });

  it('detects formats and refuses what it cannot tell', () => {
    expect(detectRequestFormat('x.jsonl', '')).toBe('mooncake');
    expect(detectRequestFormat('x.csv', 'TIMESTAMP,ContextTokens,GeneratedTokens\n')).toBe('azure');
    expect(detectRequestFormat('x.csv', '\nTimestamp,Model,Request tokens,Response tokens\n')).toBe('burstgpt');
    expect(() => detectRequestFormat('x.csv', 'a,b,c\n')).toThrow(/x.csv: cannot tell the request-trace format/);
  });

  it('names the file it cannot read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvtier-req-'));
    expect(() => readRequestTrace(join(dir, 'missing.jsonl'))).toThrow(/missing.jsonl: cannot read the request trace/);
    writeFileSync(join(dir, 'ok.jsonl'), '{"timestamp": 1, "input_length": 3, "output_length": 1, "hash_ids": [4]}\n');
    expect(readRequestTrace(join(dir, 'ok.jsonl')).requests).toHaveLength(1);
  });
});
