/**
 * Output to a closed pipe (`kvtier serve --help | head -1`): the reader has gone, so what is still
 * to be written has nowhere to go. The stream's EPIPE error is taken here instead of dying with an
 * unhandled 'error' stack trace; later writes to that stream are dropped (a destroyed stream
 * ignores them), and the command runs to its end and exits with its own status: 0 for help, and
 * whatever the work it was doing earned (a sweep still writes its results).
 */
const quieted = new WeakSet<NodeJS.WriteStream>();

export function quietOnClosedPipe(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const s of streams) {
    if (quieted.has(s)) continue;
    quieted.add(s);
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') return;
      // any other output error (a full disk behind a redirect): say so where we still can, and fail
      process.exitCode = 1;
      if (s !== process.stderr) process.stderr.write(`kvtier: error: cannot write the output: ${e.message}\n`);
    });
  }
}
