// The customer's side of outcomes: whether a rating is due (CSAT, `outcomes.csat`), and the widget's feedback port
// (the `resolution` and `rating` frames, and what `ready` offers).
import type { WidgetFeedback } from '../web/gateway.ts';
import type { Services } from '../services.ts';
import type { ConversationOutcome } from '../store/outcomes.ts';
import type { OutcomeTracker } from './tracker.ts';

/** A rating is asked once a conversation has an outcome and none was given, until the reopen window has passed. */
export function ratingDue(r: ConversationOutcome | undefined, now: number, reopenMs: number): boolean {
  return !!r && r.status !== 'open' && !r.csat && r.endedAt !== undefined && now - r.endedAt <= reopenMs;
}

export function widgetFeedback(services: Services, tracker: OutcomeTracker): WidgetFeedback {
  const { config, clock, store } = services;
  const reopenMs = config.outcomes.reopen_days * 86_400_000;
  return {
    offer: async (conversationId) => ({
      resolution: true,
      rating: config.outcomes.csat && ratingDue(await store.outcomes.get(conversationId), clock.now(), reopenMs),
    }),
    answer: (conversationId, yes) => tracker.answer(conversationId, yes),
    rate: (conversationId, rating) => (config.outcomes.csat ? tracker.rate(conversationId, rating) : Promise.resolve(false)),
  };
}
