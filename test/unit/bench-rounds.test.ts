// The benches' judged figures are medians of per-round ratios with their spread (bench/rounds.ts).
import { describe, expect, it } from 'vitest';
import { alternateRounds, perRoundRatios, ratioLine, spread } from '../../bench/rounds.ts';

describe('bench/rounds.ts', () => {
  it('gives the median, quartiles and range of an odd and an even number of values', () => {
    expect(spread([5, 1, 3])).toEqual({ n: 3, median: 3, q1: 2, q3: 4, min: 1, max: 5 });
    // Even: the median is the mean of the middle two; quartiles interpolate (R's type 7).
    expect(spread([0.4, 0.9, 0.5, 0.6])).toEqual({ n: 4, median: 0.55, q1: 0.475, q3: 0.675, min: 0.4, max: 0.9 });
    expect(spread([]).n).toBe(0);
    expect(spread([]).median).toBeNaN();
  });

  it('pairs rounds by index and ignores a round one side does not have', () => {
    const a = [{ rps: 50 }, { rps: 60 }, { rps: 70 }];
    const b = [{ rps: 100 }, { rps: 200 }];
    expect(perRoundRatios(a, b, (x) => x.rps)).toEqual([0.5, 0.3]);
  });

  it('prints the median first, so a script can read "<label> = X"', () => {
    const line = ratioLine('durable relay ratio', spread([0.4, 0.5, 0.6, 0.52]), '(target ≥ 0.50)');
    expect(line).toBe('durable relay ratio = 0.51 (median of 4 rounds; IQR 0.47–0.54; min–max 0.40–0.60) (target ≥ 0.50)');
    expect(Number(/durable relay ratio = ([\d.]+)/.exec(line)?.[1])).toBe(0.51);
  });

  it('alternates contenders ABBA and keeps each one’s blocks in round order', async () => {
    const order: string[] = [];
    const blocks = await alternateRounds(4, {
      a: async () => (order.push('a'), order.length),
      b: async () => (order.push('b'), order.length),
    });
    expect(order.join('')).toBe('abbaabba');
    expect(blocks).toEqual({ a: [1, 4, 5, 8], b: [2, 3, 6, 7] });
  });
});
