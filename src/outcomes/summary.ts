// What the dashboard and the telemetry API show of outcomes over a window: counts by outcome, the rates, handoffs by
// reason, reopens, first-response and resolution times (medians and 90th percentiles), CSAT and the estimated
// experience. Pure: computed from the stored records of the conversations that started in the window.
import { HANDOFF_REASONS, OUTCOMES, type ConversationOutcome, type HandoffReason, type OutcomeStatus } from '../store/outcomes.ts';

export interface Spread {
  count: number;
  medianMs: number | null;
  p90Ms: number | null;
}

export interface OutcomeSummary {
  /** Conversations in the window, decided or open. */
  conversations: number;
  /** Decided (not open): the rates' denominator. */
  decided: number;
  byOutcome: Record<OutcomeStatus, number>;
  /** Resolved (confirmed or assumed) / decided; null with nothing decided. */
  resolutionRate: number | null;
  /** Confirmed / decided. */
  confirmedRate: number | null;
  handoffRate: number | null;
  handoffsByReason: Record<HandoffReason, number>;
  /** Resolutions undone by the customer writing again (summed over the conversations). */
  reopens: number;
  firstResponse: Spread;
  resolution: Spread;
  csat: { count: number; average: number | null; byScore: Record<string, number> };
  /** The model's estimate (labelled estimated on every screen). */
  experience: { count: number; average: number | null; estimated: true };
}

function spread(values: number[]): Spread {
  const sorted = values.slice().sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null);
  return { count: sorted.length, medianMs: at(0.5), p90Ms: at(0.9) };
}

const rate = (n: number, of: number) => (of === 0 ? null : Math.round((n / of) * 10_000) / 10_000);
const average = (xs: number[]) => (xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100 : null);

export function summarizeOutcomes(records: ConversationOutcome[]): OutcomeSummary {
  const byOutcome = Object.fromEntries(['open', ...OUTCOMES].map((k) => [k, 0])) as Record<OutcomeStatus, number>;
  const handoffsByReason = Object.fromEntries(HANDOFF_REASONS.map((k) => [k, 0])) as Record<HandoffReason, number>;
  const csatByScore: Record<string, number> = { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 };
  let reopens = 0;
  const first: number[] = [];
  const resolved: number[] = [];
  const csat: number[] = [];
  const experience: number[] = [];
  for (const r of records) {
    byOutcome[r.status]++;
    reopens += r.reopens;
    if (r.status === 'handed_over') handoffsByReason[r.reason ?? 'other']++;
    if (r.firstResponseAt !== undefined) first.push(r.firstResponseAt - r.startedAt);
    if ((r.status === 'resolved_confirmed' || r.status === 'resolved_assumed') && r.endedAt !== undefined) resolved.push(r.endedAt - r.startedAt);
    if (r.csat) {
      csat.push(r.csat.score);
      csatByScore[String(r.csat.score)]++;
    }
    if (r.experience) experience.push(r.experience.score);
  }
  const decided = records.length - byOutcome.open;
  return {
    conversations: records.length,
    decided,
    byOutcome,
    resolutionRate: rate(byOutcome.resolved_confirmed + byOutcome.resolved_assumed, decided),
    confirmedRate: rate(byOutcome.resolved_confirmed, decided),
    handoffRate: rate(byOutcome.handed_over, decided),
    handoffsByReason,
    reopens,
    firstResponse: spread(first),
    resolution: spread(resolved),
    csat: { count: csat.length, average: average(csat), byScore: csatByScore },
    experience: { count: experience.length, average: average(experience), estimated: true },
  };
}
