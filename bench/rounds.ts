// The noise-proof method every ratio bench shares: contenders run in alternating
// rounds (ABBA order, so neither always goes first), each round gives one ratio
// per pair of contenders, and the figure reported is the median of those
// per-round ratios with its spread. A round that something else on the machine
// disturbed moves the spread, not the median.

/** At least this many rounds per contender for a judged figure (issue 22). */
export const MIN_ROUNDS = 8;

export interface Spread {
  n: number;
  median: number;
  /** First and third quartiles (linear interpolation between order statistics, as R's type 7). */
  q1: number;
  q3: number;
  min: number;
  max: number;
}

/** The q-quantile (0 ≤ q ≤ 1) of an ascending array, interpolating between neighbours. */
function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** Median, quartiles and range of `values` (NaN everywhere when empty). */
export function spread(values: number[]): Spread {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return { n: 0, median: NaN, q1: NaN, q3: NaN, min: NaN, max: NaN };
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    min: sorted[0],
    max: sorted[sorted.length - 1],
  };
}

/** Round i's ratio of `of` to `to`: `value(of[i]) / value(to[i])`, for the rounds both have. */
export function perRoundRatios<B>(of: B[], to: B[], value: (b: B) => number): number[] {
  return of.slice(0, Math.min(of.length, to.length)).map((b, i) => value(b) / value(to[i]));
}

/**
 * One line a script can read: `<label> = <median>` first, then the spread, e.g.
 * `durable relay ratio = 0.52 (median of 8 rounds; IQR 0.49–0.55; min–max 0.44–0.60) (target ≥ 0.50)`.
 */
export function ratioLine(label: string, s: Spread, suffix = '', digits = 2): string {
  const f = (x: number) => x.toFixed(digits);
  return `${label} = ${f(s.median)} (median of ${s.n} rounds; IQR ${f(s.q1)}–${f(s.q3)}; min–max ${f(s.min)}–${f(s.max)})${suffix ? ` ${suffix}` : ''}`;
}

/**
 * Runs `rounds` rounds of every contender, ABBA order (round 1 in the order given, round 2 reversed, …), logging
 * each block with `show`; returns each contender's blocks in round order.
 */
export async function alternateRounds<T extends string, B>(
  rounds: number,
  contenders: Record<T, () => Promise<B>>,
  show: (name: T, round: number, block: B) => void = () => {},
): Promise<Record<T, B[]>> {
  const names = Object.keys(contenders) as T[];
  const blocks = Object.fromEntries(names.map((n) => [n, [] as B[]])) as Record<T, B[]>;
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 === 0 ? names : [...names].reverse()) {
      const b = await contenders[n]();
      blocks[n].push(b);
      show(n, r, b);
    }
  }
  return blocks;
}
