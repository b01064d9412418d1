// handoff.business_hours (issue 35): open or not at a given instant, and when the team is back, in the configured
// IANA time zone across daylight saving changes.
import { describe, expect, it } from 'vitest';
import { BusinessHoursSchema } from '../../src/config/business-hours-schema.ts';
import { backAtText, openness } from '../../src/handoff/business-hours.ts';

const berlin = BusinessHoursSchema.parse({
  time_zone: 'Europe/Berlin',
  weekly: { mon: ['09:00-17:00'], tue: ['09:00-12:00', '13:00-17:00'], wed: ['09:00-17:00'], thu: ['09:00-17:00'], fri: ['09:00-17:00'] },
  closed_dates: ['2026-12-24', '2026-12-25'],
});

describe('business hours', () => {
  it('inside the opening hours: open (local time, not UTC)', () => {
    // Wednesday 25 March 2026, 08:30 UTC = 09:30 in Berlin (CET, UTC+1).
    expect(openness(berlin, Date.UTC(2026, 2, 25, 8, 30))).toEqual({ open: true });
    // 08:30 in Berlin is 07:30 UTC: not open yet, back at 09:00 local = 08:00 UTC.
    expect(openness(berlin, Date.UTC(2026, 2, 25, 7, 30))).toEqual({ open: false, backAt: Date.UTC(2026, 2, 25, 8, 0) });
  });

  it('after Friday closing, across the spring daylight saving change: back Monday 09:00 CEST (07:00 UTC, not 08:00)', () => {
    // Friday 27 March 2026, 17:30 in Berlin (16:30 UTC). Clocks go forward on Sunday 29 March.
    const r = openness(berlin, Date.UTC(2026, 2, 27, 16, 30));
    expect(r).toEqual({ open: false, backAt: Date.UTC(2026, 2, 30, 7, 0) });
    expect(backAtText((r as { backAt: number }).backAt, 'Europe/Berlin')).toBe('Monday 09:00 (Europe/Berlin)');
  });

  it('across the autumn change in New York: back Monday 09:00 EST (14:00 UTC)', () => {
    const ny = BusinessHoursSchema.parse({ time_zone: 'America/New_York', weekly: { mon: ['09:00-17:00'], fri: ['09:00-17:00'] } });
    // Friday 30 October 2026, 18:00 EDT (22:00 UTC); clocks go back on Sunday 1 November.
    expect(openness(ny, Date.UTC(2026, 9, 30, 22, 0))).toEqual({ open: false, backAt: Date.UTC(2026, 10, 2, 14, 0) });
  });

  it('the lunch break, and closed dates are skipped', () => {
    // Tuesday 24 March 2026 12:30 Berlin (11:30 UTC): back at 13:00 local.
    expect(openness(berlin, Date.UTC(2026, 2, 24, 11, 30))).toEqual({ open: false, backAt: Date.UTC(2026, 2, 24, 12, 0) });
    // Wednesday 23 December 2026 after closing: 24 and 25 are closed, then the weekend: back Monday 28 December 09:00 CET.
    expect(openness(berlin, Date.UTC(2026, 11, 23, 17, 0))).toEqual({ open: false, backAt: Date.UTC(2026, 11, 28, 8, 0) });
  });

  it('no business hours configured: always open; a week with no opening at all: closed with no time given', () => {
    expect(openness(undefined, 0)).toEqual({ open: true });
    expect(openness(BusinessHoursSchema.parse({ time_zone: 'UTC', weekly: {} }), Date.UTC(2026, 0, 1))).toEqual({ open: false });
  });

  it('bad configuration is refused with a message', () => {
    expect(BusinessHoursSchema.safeParse({ time_zone: 'Mars/Olympus', weekly: {} }).success).toBe(false);
    const bad = BusinessHoursSchema.safeParse({ time_zone: 'UTC', weekly: { mon: ['17:00-09:00'] } });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('before the closing time');
  });
});
