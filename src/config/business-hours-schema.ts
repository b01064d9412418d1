// `handoff.business_hours`: the team's time zone, weekly opening hours and closed dates (issue 35, README "Human
// handoff"). Computed by src/conversations/business-hours.ts.
import { z } from 'zod';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const validZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$|^24:00$/;
/** "09:00-17:00": local time, start before end, within one day ("24:00" ends at midnight). */
const Range = z.string().transform((v, ctx) => {
  const [from, to] = v.split('-').map((x) => x.trim());
  if (!from || !to || !HHMM.test(from) || !HHMM.test(to)) {
    ctx.addIssue({ code: 'custom', message: `"${v}" is not a range of local times like "09:00-17:00"` });
    return z.NEVER;
  }
  const minutes = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3));
  if (minutes(from) >= minutes(to)) {
    ctx.addIssue({ code: 'custom', message: `"${v}": the opening time must come before the closing time (ranges stay within one day)` });
    return z.NEVER;
  }
  return { from: minutes(from), to: minutes(to) };
});

export const BusinessHoursSchema = z.strictObject({
  /** An IANA time zone, e.g. "Europe/Berlin": opening hours are local times there (daylight saving included). */
  time_zone: z.string().refine(validZone, { message: 'not an IANA time zone this Node knows (e.g. "Europe/Berlin")' }),
  /** Per weekday (sun … sat), the opening ranges; a day not listed is closed. */
  weekly: z.partialRecord(z.enum(WEEKDAYS), z.array(Range).max(8)),
  /** Local dates (YYYY-MM-DD) the team is closed all day. */
  closed_dates: z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date like 2026-12-25')).default([]),
});

export type BusinessHours = z.output<typeof BusinessHoursSchema>;
