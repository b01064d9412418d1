// Message times as people read them: "just now", "5 min ago", "14:05", "Yesterday, 14:05", "12 Mar, 14:05";
// the exact date and time for hover and focus. Pure: `now` and the locale are passed in.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const startOfDay = (t: number) => {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
};

export function relativeTime(at: number, now: number, locale: string, justNow: string): string {
  const age = now - at;
  if (age < MINUTE) return justNow;
  const clock = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit' }).format(at);
  if (age < HOUR) return new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'short' }).format(-Math.floor(age / MINUTE), 'minute');
  const today = startOfDay(now);
  if (at >= today) return clock;
  if (at >= today - 24 * HOUR) {
    const yesterday = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' }).format(-1, 'day');
    return `${yesterday.charAt(0).toLocaleUpperCase(locale) + yesterday.slice(1)}, ${clock}`;
  }
  const sameYear = new Date(at).getFullYear() === new Date(now).getFullYear();
  return new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', year: sameYear ? undefined : 'numeric', hour: 'numeric', minute: '2-digit' }).format(
    at,
  );
}

/**
 * When the team is back, in the customer's words and clock: "Monday 9:00 AM" (en-US), "lunes, 9:00" (es). `timeZone`:
 * whose clock (absent: the browser's, the customer's own).
 */
export const backAtTime = (at: number, locale: string, timeZone?: string): string =>
  new Intl.DateTimeFormat(locale, { weekday: 'long', hour: 'numeric', minute: '2-digit', ...(timeZone ? { timeZone } : {}) }).format(at);

/** A usual wait in whole minutes (at least 1). */
export const waitMinutes = (ms: number): number => Math.max(1, Math.ceil(ms / 60_000));

export const exactTime = (at: number, locale: string): string =>
  new Intl.DateTimeFormat(locale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', hour: 'numeric', minute: '2-digit' }).format(at);
