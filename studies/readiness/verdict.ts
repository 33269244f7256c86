/** One reading of a check: a named number, the criterion it is held to, and whether it meets it. */
export interface Reading {
  name: string;
  value: number | null;
  criterion: string;
  pass: boolean;
  /** where the number comes from */
  source?: string;
}

export interface CheckVerdict {
  check: string;
  policy: string;
  pass: boolean;
  readings: Reading[];
  /** what the check did, in a sentence or two */
  method: string;
  details?: Record<string, unknown>;
}
