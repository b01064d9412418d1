// Telemetry record ids: `<13-digit ms>-<8-digit seq>`, so ids sort by the time a fact happened, on every engine.

/** Sortable id: 13-digit ms timestamp, then a sequence. */
export function timeOrderedId(at: number, seq: number): string {
  // 13 digits of ms cover years 2001–2286 without padding; pad only the sequence.
  const ms = Math.max(0, Math.floor(at));
  return `${ms >= 1e12 ? ms : String(ms).padStart(13, '0')}-${String(seq % 1e8).padStart(8, '0')}`;
}

/** The first possible key at or after `at` (ms). */
export const keyAt = (at: number) => `${String(Math.max(0, Math.floor(at))).padStart(13, '0')}-`;

/** The ms part of an id or segment key. */
export const msOf = (id: string) => Number(id.slice(0, id.indexOf('-')));
