// The outcome metrics (issue 39, docs/outcomes.md), fed by the telemetry stream like metrics.ts: outcomes decided by
// channel, outcome and handoff reason; reopens; first-response and resolution times; ratings.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { TelemetryEvent } from './types.ts';

const TIME_BUCKETS = [5, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 3 * 86400, 7 * 86400];

export function createOutcomeMetrics(registry: Registry): (e: TelemetryEvent) => void {
  const outcomes = new Counter({
    name: 'parley_conversation_outcomes_total',
    help: 'Conversation outcomes decided (docs/outcomes.md); reason: the handoff reason category of handed_over, empty otherwise',
    labelNames: ['channel', 'outcome', 'reason'],
    registers: [registry],
  });
  const reopens = new Counter({
    name: 'parley_conversation_reopens_total',
    help: 'Resolved conversations undone by the customer writing again within outcomes.reopen_days',
    labelNames: ['channel'],
    registers: [registry],
  });
  const firstResponse = new Histogram({
    name: 'parley_first_response_seconds',
    help: "Time from a conversation's first customer message to its first answer, observed when its outcome is decided",
    labelNames: ['channel'],
    buckets: TIME_BUCKETS,
    registers: [registry],
  });
  const resolution = new Histogram({
    name: 'parley_resolution_seconds',
    help: "Time from a conversation's first customer message to its outcome",
    labelNames: ['channel', 'outcome'],
    buckets: TIME_BUCKETS,
    registers: [registry],
  });
  const ratings = new Counter({
    name: 'parley_conversation_ratings_total',
    help: "Ratings of conversations: kind csat (the customer's) or experience (the model's estimate), by score 1-5",
    labelNames: ['kind', 'score'],
    registers: [registry],
  });
  return (e) => {
    const d = e.data;
    const channel = e.channel ?? 'unknown';
    if (e.type === 'conversation.outcome') {
      if (d.outcome === 'reopened') return reopens.labels(channel).inc();
      const outcome = String(d.outcome);
      outcomes.labels(channel, outcome, typeof d.reason === 'string' ? d.reason : '').inc();
      if (typeof d.firstResponseMs === 'number') firstResponse.labels(channel).observe(d.firstResponseMs / 1000);
      if (typeof d.resolutionMs === 'number') resolution.labels(channel, outcome).observe(d.resolutionMs / 1000);
    } else if (e.type === 'conversation.rating') ratings.labels(String(d.kind), String(d.score)).inc();
  };
}
