/**
 * File requests timed by their size (a link direction's request_us): a storage device whose small
 * requests cost more than a fixed alpha plus their bytes implies. The HIL file tier issues every
 * request 4 KiB-aligned (O_DIRECT), so a request of b bytes occupies align(b, 4096) on the device.
 */

/** the file tier's request unit */
export const REQUEST_ALIGN = 4096;

/**
 * The time of one request of `requestBytes` (already 4 KiB-aligned) from request_us points: below the
 * first point, the first point's time; between two points, linear between them. Only for requests
 * smaller than the last point's bytes (the caller prices larger ones with alpha + bytes / GBps).
 */
export function requestTimeUs(points: readonly (readonly [number, number])[], requestBytes: number): number {
  if (requestBytes <= points[0][0]) return points[0][1];
  let i = 1;
  while (i < points.length - 1 && points[i][0] < requestBytes) i++;
  const [b0, t0] = points[i - 1];
  const [b1, t1] = points[i];
  return t0 + ((requestBytes - b0) / (b1 - b0)) * (t1 - t0);
}

/**
 * Total alpha of `runs` file requests of `bytes` in all on a route whose link times requests by size,
 * its bytes moving at `bytesPerUs`: each request of the average size takes requestTimeUs, of which its
 * bytes' time at the flow rate is the flow's, the rest its alpha (never negative). Requests of the last
 * point's bytes or more: `alphaUs` each.
 */
export function requestAlphaUs(points: readonly (readonly [number, number])[], alphaUs: number, bytesPerUs: number, bytes: number, runs: number): number {
  const per = bytes / runs;
  const req = Math.ceil(per / REQUEST_ALIGN) * REQUEST_ALIGN;
  if (req >= points[points.length - 1][0]) return alphaUs * runs;
  return runs * Math.max(0, requestTimeUs(points, req) - per / bytesPerUs);
}
