// The dashboard's formats for people (pure functions of dashboard/src/dom.ts).
import { describe, expect, it } from 'vitest';
import { fmtAgo, fmtDuration, stateWords } from '../../dashboard/src/dom.ts';

describe('fmtDuration', () => {
  it('says a sub-second first response in milliseconds, and tenths below 10 s, not "0 s"', () => {
    expect(fmtDuration(412.4)).toBe('412 ms');
    expect(fmtDuration(40)).toBe('40 ms');
    expect(fmtDuration(1_440)).toBe('1.4 s');
    expect(fmtDuration(9_940)).toBe('9.9 s');
  });

  it('then whole seconds, minutes, hours and days; nothing measured is a dash', () => {
    expect(fmtDuration(12_400)).toBe('12 s');
    expect(fmtDuration(150_000)).toBe('3 min');
    expect(fmtDuration(5_400_000)).toBe('1.5 h');
    expect(fmtDuration(2 * 86_400_000)).toBe('2.0 d');
    expect(fmtDuration(null)).toBe('–');
  });
});

describe('fmtAgo', () => {
  it('rounds to the unit people read', () => {
    const now = 1_000_000_000;
    expect(fmtAgo(now - 10_000, now)).toBe('just now');
    expect(fmtAgo(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(fmtAgo(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(fmtAgo(now - 2 * 86_400_000, now)).toBe('2 d ago');
    expect(fmtAgo(now + 5_000, now)).toBe('just now');
  });
});

describe('stateWords', () => {
  it("says a conversation's state in words (the recent list showed awaitingConfirmation, withHuman)", () => {
    expect(stateWords('awaitingConfirmation')).toBe('awaiting confirmation');
    expect(stateWords('withHuman')).toBe('with a person');
    expect(stateWords('callingTool')).toBe('calling a function');
    expect(stateWords('idle')).toBe('idle');
    expect(stateWords('somethingNew')).toBe('somethingNew');
  });
});
