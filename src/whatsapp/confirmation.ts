// A customer's answer to a pending confirmation: the Yes/No button of that confirmation, or a typed yes/no.
import type { InboundMessage } from './webhook-payload.ts';

const CONFIRM_REPLY = /^confirm:(.+):(yes|no)$/;
const YES = /^\s*(yes|y|yeah|yep|ok|okay|approve|confirm|sí|si|ja|oui)\s*[.!]*\s*$/i;
const NO = /^\s*(no|n|nope|decline|cancel|stop|nein|non)\s*[.!]*\s*$/i;

/** A button reply for this confirmation, or a typed yes/no while one is pending. */
export function confirmationAnswer(m: Pick<InboundMessage, 'text' | 'replyId'>, pendingId: string): boolean | undefined {
  const button = m.replyId ? CONFIRM_REPLY.exec(m.replyId) : null;
  if (button) return button[1] === pendingId ? button[2] === 'yes' : undefined;
  if (YES.test(m.text)) return true;
  if (NO.test(m.text)) return false;
  return undefined;
}
