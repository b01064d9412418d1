// Outcomes on WhatsApp (docs/outcomes.md): the rating (CSAT) asked with reply buttons once a conversation has an
// outcome, only inside the customer's 24-hour window (free-form messages may not go out after it), and the customer's
// button press read back as their rating. WhatsApp allows three reply buttons: they stand for 5, 3 and 1.
import type { Customer } from '../store/model.ts';

import { insideWhatsAppWindow } from '../customers/whatsapp-window.ts';
import type { OutboundWhatsApp } from '../whatsapp/outbound.ts';

export const RATING_TEXT = 'How did we do? Tap one to rate this conversation.';
export const RATING_BUTTONS = [
  { score: 5, title: 'Great' },
  { score: 3, title: 'OK' },
  { score: 1, title: 'Poor' },
] as const;
export const RATING_THANKS = 'Thank you for your rating!';

const RATING_REPLY = /^csat:(.+):([1-5])$/;

/** A rating button's press: the conversation and the score, or undefined for any other message. */
export function ratingPress(replyId: string | undefined): { conversationId: string; score: number } | undefined {
  const m = replyId ? RATING_REPLY.exec(replyId) : null;
  return m ? { conversationId: m[1], score: Number(m[2]) } : undefined;
}

/** The rating request for this customer, or why none may go out. */
export function ratingRequest(
  customer: Customer | undefined,
  to: string | undefined,
  conversationId: string,
  now: number,
): { message: OutboundWhatsApp } | { skipped: 'outside_window' | 'no_address' } {
  if (!to) return { skipped: 'no_address' };
  if (!insideWhatsAppWindow(customer, now)) return { skipped: 'outside_window' };
  return {
    message: {
      kind: 'buttons',
      to,
      text: RATING_TEXT,
      buttons: RATING_BUTTONS.map((b) => ({ id: `csat:${conversationId}:${b.score}`, title: b.title })),
    },
  };
}
