// Several business numbers (`other_numbers: answer`): a message that reached any of them is answered from the number
// the customer last wrote to; otherwise everything goes out from phone_id.
import type { Customer } from '../customers/repo.ts';
import type { WhatsAppConfig } from './config-check.ts';
import type { InboundMessage } from './webhook-payload.ts';

export interface NumberRouting {
  /** The business number a webhook message reached, when replies may go out from it (SDK ingest has none). */
  businessNumberOf(m: InboundMessage): string | undefined;
  /** Where a message to this customer goes out from: the number they last wrote to; unset means phone_id. */
  fromNumberFor(c: Customer | undefined): { fromNumberId?: string };
}

export function numberRouting(wa: WhatsAppConfig): NumberRouting {
  const answersFromAny = wa.provider === 'meta' && wa.other_numbers === 'answer';
  return {
    businessNumberOf: (m) => (answersFromAny && m.phoneNumberId ? m.phoneNumberId : undefined),
    fromNumberFor: (c) => (answersFromAny && c?.businessNumberId ? { fromNumberId: c.businessNumberId } : {}),
  };
}
