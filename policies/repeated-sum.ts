/**
 * x + u + u + ... (len additions, each rounded as doubles are) without len dependent additions.
 * Within the binade [B/2, B) of a normal x every double is a multiple of q = B·2^-53, so x + u
 * rounds to x + r, r being u rounded to the nearest multiple of q, while the sum stays below B;
 * len additions then give x + len·r exactly. Where that does not hold (the sum would reach B, u is
 * half way between two multiples of q so that the rounding depends on x, x is 0 or subnormal, u is
 * negative) the additions are done one at a time. The binade is kept between calls: a row summed
 * in block order mostly stays in one.
 */
export class RepeatedSum {
  private u = Number.NaN;
  /** x's binade [half, B), its r, and the sum below which len additions may be jumped */
  private half = Number.POSITIVE_INFINITY;
  private B = 0;
  private r = -1;
  private lim = -1;

  /** x + u, len times in order (len >= 0), exactly as the plain loop rounds it */
  add(x: number, u: number, len: number): number {
    if (!(x >= this.half && x < this.B) || u !== this.u) this.rebase(x, u);
    const r = this.r;
    if (r >= 0) {
      const y = x + len * r;
      if (y < this.lim) return y;
    }
    for (; len > 0; len--) x += u;
    return x;
  }

  private rebase(x: number, u: number): void {
    // (the search for the binade starts from the last one: the next one, mostly)
    let B = this.B > 0 ? this.B : 1;
    this.u = u;
    this.r = -1;
    this.half = Number.POSITIVE_INFINITY;
    this.B = 0;
    if (!(x >= MIN_NORMAL && x < Number.MAX_VALUE / 2 && u >= 0 && u < Number.POSITIVE_INFINITY)) return;
    while (B <= x) B *= 2;
    while (B / 2 > x) B /= 2;
    const q = B * ULP_OF_HALF;
    const f = u / q;
    const f0 = Math.floor(f);
    const d = f - f0;
    this.half = B / 2;
    this.B = B;
    this.lim = B - q;
    this.r = d === 0.5 ? -1 : (d < 0.5 ? f0 : f0 + 1) * q;
  }
}

const MIN_NORMAL = 2 ** -1022;
/** the spacing of the doubles in [B/2, B), relative to B */
const ULP_OF_HALF = 2 ** -53;
