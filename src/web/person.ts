// The widget's "Talk to a person" (a `handoff` frame, offered after "No" to "Did that answer your question?"): the
// conversation is handed to a person as the integrator's `POST /conversations/:id/handoff` does, with the reason the
// inbox, webhooks and the SDK's onHandoff read. A person having it already changes nothing and is said so.
import type { WidgetFrameErrorCode } from '../../sdk/src/error-codes.ts';
import type { ConversationHost } from '../conversations/host.ts';

/** The reason the handoff carries (`handoff.reason` in the inbox, the `handoff.requested` webhook and onHandoff). */
export const CUSTOMER_ASKED_REASON = 'The customer answered No and asked for a person';

export interface PersonDeps {
  host: Pick<ConversationHost, 'record' | 'handoff'>;
  /** `handoff.enabled`: off, the widget is not offered the button and the frame is refused. */
  enabled: boolean;
}

export type PersonResult = { ok: true } | { ok: false; code: WidgetFrameErrorCode; message: string };

const NOTHING_TO_HAND_OVER: PersonResult = { ok: false, code: 'no_conversation', message: 'There is no conversation to hand over yet' };

export async function askForPerson(d: PersonDeps, conversationId: string): Promise<PersonResult> {
  if (!d.enabled) return { ok: false, code: 'not_enabled', message: 'Handoff to a person is turned off here (handoff.enabled)' };
  const record = await d.host.record(conversationId);
  if (!record) return NOTHING_TO_HAND_OVER;
  if (record.handoff) return { ok: false, code: 'already_with_person', message: 'A person already has this conversation' };
  const r = await d.host.handoff(conversationId, CUSTOMER_ASKED_REASON);
  return r.ok ? { ok: true } : NOTHING_TO_HAND_OVER;
}
