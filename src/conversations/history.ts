// Every message of a conversation, in order (customer, assistant, tool calls and results, confirmations), is kept by
// the store's history repository (src/store/repos.ts, HistoryStore). A conversation's id is its customer's and
// channel's: one conversation per customer per channel.
import { MessageSource } from '../../sdk/src/widget-protocol.ts';
import type { MessageRecord } from '../store/model.ts';

export type { MessageRecord, MessageRole } from '../store/model.ts';

const Sources = MessageSource.array().min(1);

/** The sources an assistant's stored reply cites (issue 36), or undefined (none, or not readable). */
export function sourcesOf(r: MessageRecord): MessageSource[] | undefined {
  if (r.role !== 'assistant' || r.data?.sources === undefined) return undefined;
  const parsed = Sources.safeParse(r.data.sources);
  return parsed.success ? parsed.data : undefined;
}

export const conversationIdFor = (customerId: string, channel: 'web' | 'whatsapp') => `conv_${channel}_${customerId}`;
