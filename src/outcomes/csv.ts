// The conversations export as CSV (RFC 4180: every field quoted, quotes doubled, CRLF lines). A field that a
// spreadsheet would run as a formula (starting with =, +, -, @, tab or CR) gets a leading apostrophe: the export holds
// customers' words. Small enough not to need a package.
import type { ConversationOutcome } from '../store/outcomes.ts';

/** A conversation as the API lists it: its outcome record, who the customer is, and (with store_text) its last message. */
export type OutcomeRow = ConversationOutcome & {
  customer?: { email?: string; phone?: string };
  lastMessage?: { text: string; from: 'customer' | 'assistant' | 'agent'; at: number };
};

const FORMULA = /^[=+\-@\t\r]/;

const field = (v: unknown): string => {
  if (v === undefined || v === null) return '""';
  const s = String(v);
  const safe = typeof v === 'string' && FORMULA.test(s) ? `'${s}` : s;
  return `"${safe.replaceAll('"', '""')}"`;
};

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const seconds = (from: number, to: number | undefined) => (to === undefined ? undefined : Math.round((to - from) / 1000));

export const CSV_COLUMNS = [
  'conversation_id',
  'channel',
  'customer_id',
  'external_id',
  'email',
  'phone',
  'outcome',
  'handoff_reason',
  'reopens',
  'started_at',
  'first_response_seconds',
  'ended_at',
  'resolution_seconds',
  'csat',
  'csat_comment',
  'experience_estimated',
  'experience_reason',
] as const;

export function toCsv(rows: OutcomeRow[], withText: boolean): string {
  const header = withText ? [...CSV_COLUMNS, 'last_message'] : [...CSV_COLUMNS];
  const lines = [header.map(field).join(',')];
  for (const r of rows) {
    const cells: unknown[] = [
      r.conversationId,
      r.channel,
      r.customerId,
      r.externalId,
      r.customer?.email,
      r.customer?.phone,
      r.status,
      r.status === 'handed_over' ? r.reason : undefined,
      r.reopens,
      iso(r.startedAt),
      r.firstResponseAt === undefined ? undefined : seconds(r.startedAt, r.firstResponseAt),
      iso(r.endedAt),
      seconds(r.startedAt, r.endedAt),
      r.csat?.score,
      withText ? r.csat?.comment : undefined,
      r.experience?.score,
      r.experience?.comment,
    ];
    if (withText) cells.push(r.lastMessage?.text);
    lines.push(cells.map(field).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
