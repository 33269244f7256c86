/** A malformed request-trace line: names the file, the 1-based line and the field. */
export class TraceFormatError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${file}:${line}: ${field === '' ? '' : `field "${field}": `}${detail}`);
    this.name = 'TraceFormatError';
  }
}
