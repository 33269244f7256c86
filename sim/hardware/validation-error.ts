/**
 * One error for everything wrong with one input: each problem is a line `source: path message`,
 * so a user fixes them all in one pass instead of one per run.
 */
export class ValidationError extends Error {
  readonly source: string;
  readonly problems: readonly string[];

  constructor(source: string, problems: readonly string[]) {
    super(problems.map((p) => `${source}: ${p}`).join('\n'));
    this.name = 'ValidationError';
    this.source = source;
    this.problems = problems;
  }
}
