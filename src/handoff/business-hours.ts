// Pure: is the team open at `now` (handoff.business_hours), and if not, when is it back? Local times are read in
// the configured IANA time zone with Intl (daylight saving changes included); no clock, no I/O. Unit-tested in
// test/unit/business-hours.test.ts.
import { WEEKDAYS, type BusinessHours } from '../config/business-hours-schema.ts';

/** `backAt`: the next opening (epoch ms); absent when no opening is found within a year (every day closed). */
export type Openness = { open: true } | { open: false; backAt?: number };

const DAY_MS = 86_400_000;
const LOOKAHEAD_DAYS = 370;

interface LocalTime {
  y: number;
  m: number;
  d: number;
  minutes: number;
}

function formatterFor(timeZone: string) {
  return new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
}

function localParts(fmt: Intl.DateTimeFormat, at: number): LocalTime & { s: number } {
  const p: Record<string, number> = {};
  for (const part of fmt.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return { y: p.year, m: p.month, d: p.day, minutes: p.hour * 60 + p.minute, s: p.second };
}

/** The zone's offset from UTC at `at` (ms; east positive). */
function offsetAt(fmt: Intl.DateTimeFormat, at: number): number {
  const l = localParts(fmt, at);
  const asUtc = Date.UTC(l.y, l.m - 1, l.d, 0, l.minutes, l.s);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** The instant a local wall time happens (a time skipped by a daylight saving change: the instant after the gap). */
export function localToEpoch(timeZone: string, l: LocalTime): number {
  const fmt = formatterFor(timeZone);
  const wall = Date.UTC(l.y, l.m - 1, l.d, 0, l.minutes);
  const first = wall - offsetAt(fmt, wall);
  return wall - offsetAt(fmt, first);
}

const dateKey = (y: number, m: number, d: number) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;

export function openness(bh: BusinessHours | undefined, now: number): Openness {
  if (!bh) return { open: true };
  const fmt = formatterFor(bh.time_zone);
  const today = localParts(fmt, now);
  const closed = new Set(bh.closed_dates);
  for (let i = 0; i < LOOKAHEAD_DAYS; i++) {
    const day = new Date(Date.UTC(today.y, today.m - 1, today.d) + i * DAY_MS);
    const [y, m, d] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
    if (closed.has(dateKey(y, m, d))) continue;
    const ranges = [...(bh.weekly[WEEKDAYS[day.getUTCDay()]] ?? [])].sort((a, b) => a.from - b.from);
    for (const r of ranges) {
      if (i === 0 && r.from <= today.minutes && today.minutes < r.to) return { open: true };
      if (i > 0 || r.from > today.minutes) return { open: false, backAt: localToEpoch(bh.time_zone, { y, m, d, minutes: r.from }) };
    }
  }
  return { open: false };
}

/** "Monday 09:00 (Europe/Berlin)": when the team is back, for texts without the customer's locale (WhatsApp). */
export function backAtText(backAt: number, timeZone: string, locale = 'en-GB'): string {
  const when = new Intl.DateTimeFormat(locale, { timeZone, weekday: 'long', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(backAt);
  return `${when} (${timeZone})`;
}
