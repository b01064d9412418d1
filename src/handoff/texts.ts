// The handoff texts of channels without a widget (WhatsApp): what the customer reads when a person is asked for, when
// no one answers in time, and when the assistant has the conversation back (issue 35). English, with the team's time
// zone named (the customer's own is not known there).
import type { ConversationOutput } from '../../machines/conversation.ts';
import { backAtText } from './business-hours.ts';
import type { HandoffNotice } from './outlook.ts';

export const HANDOFF_TEXTS = {
  human: 'A person from our team will reply here shortly.',
  assistant: 'You are chatting with our assistant again.',
  returned: 'No one from our team could reply in time, so our assistant is answering again. Ask for a person whenever you like.',
  offline: 'No one from our team is free right now. A person will reply here as soon as someone is; you do not need to stay in the chat.',
} as const;

const minutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

export function requestedText(notice: HandoffNotice): string {
  if (notice.kind === 'closed') {
    const back = notice.backAt === undefined ? 'later' : `on ${backAtText(notice.backAt, notice.timeZone)}`;
    return `Our team is away right now and back ${back}. Your messages are kept: a person will reply here then.`;
  }
  if (notice.kind === 'open' && notice.expectedWaitMs !== undefined) {
    const n = minutes(notice.expectedWaitMs);
    return `A person from our team will reply here shortly (usually within ${n} minute${n === 1 ? '' : 's'}).`;
  }
  return HANDOFF_TEXTS.human;
}

/** The text of a handoff output (none for `joined`: the agent's own message follows). */
export async function handoffText(o: Extract<ConversationOutput, { type: 'handoff' }>, atHandoff: () => Promise<HandoffNotice>): Promise<string | undefined> {
  if (o.phase === 'requested') return requestedText(await atHandoff());
  if (o.phase === 'offline') return HANDOFF_TEXTS.offline;
  if (o.phase === 'released') return o.by === 'idle' ? HANDOFF_TEXTS.returned : HANDOFF_TEXTS.assistant;
  return undefined;
}
