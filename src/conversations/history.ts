// Every message of a conversation, in order (customer, assistant, tool calls and results, confirmations), is kept by
// the store's history repository (src/store/repos.ts, HistoryStore). A conversation's id is its customer's and
// channel's: one conversation per customer per channel.
export type { MessageRecord, MessageRole } from '../store/model.ts';

export const conversationIdFor = (customerId: string, channel: 'web' | 'whatsapp') => `conv_${channel}_${customerId}`;
