// `withHuman`: a person has the conversation. Customer messages are stored and forwarded (`forward`), never given to
// the LLM; agent messages (`agent.message`) are the replies. Its deadlines (offline notice, optional hand-back:
// human.ts) are computed from times in context, and re-armed on `restored` and by every agent message.
import { assign, emit } from 'xstate';
import { HUMAN_TIMER_CAP_MS, humanDue } from '../human.ts';
import { AGENT_IDS, authorOf, releasedOutput } from './handoff.ts';
import { conversationSetup } from './setup.ts';
import { RECENT_IDS } from './turn.ts';

export const withHuman = conversationSetup.createStateConfig({
  after: {
    // What `humanDue` says is due now (human.ts); nothing due (the capped wait passed): armed again.
    humanLeft: [
      {
        guard: ({ context }) => humanDue(context.human, context)?.kind === 'offline',
        target: 'withHuman',
        reenter: true,
        actions: [
          emit(({ context }) => ({ type: 'handoff', id: `o:${context.human!.since}`, phase: 'offline', since: context.human!.since })),
          assign(({ context }) => ({
            lastAt: Math.max(context.lastAt, humanDue(context.human, context)!.at),
            human: Object.assign({}, context.human!, { offlineAsked: true }),
          })),
        ],
      },
      {
        guard: ({ context }) => humanDue(context.human, context)?.kind === 'return',
        target: 'idle',
        actions: [
          assign(({ context }) => ({ lastAt: Math.max(context.lastAt, humanDue(context.human, context)!.at) })),
          emit(({ context }) => releasedOutput(context.human!, 'idle', undefined, context.lastAt)),
          assign({ human: undefined }),
        ],
      },
      { target: 'withHuman', reenter: true, actions: assign(({ context }) => ({ lastAt: context.lastAt + HUMAN_TIMER_CAP_MS })) },
    ],
  },
  on: {
    'customer.message': {
      guard: 'isNewMessage',
      actions: [
        assign(({ context, event }) => ({ lastAt: event.at, recent: [...context.recent, event.messageId].slice(-RECENT_IDS) })),
        emit(({ event }) => ({ type: 'forward', messageId: event.messageId, text: event.text })),
      ],
    },
    // Already with a person.
    'handoff.request': {},
    'agent.message': {
      // Re-entered: the idle deadline starts again from this message. A retried one (same id) changes nothing.
      guard: 'isNewAgentMessage',
      target: 'withHuman',
      reenter: true,
      actions: [
        'agentJoined',
        emit(({ event }) => ({ type: 'agent', id: event.id, text: event.text, author: authorOf(event.author) })),
        assign(({ context, event }) => ({
          lastAt: event.at,
          human: Object.assign({}, context.human!, { lastAgentAt: event.at, agent: authorOf(event.author) }),
          agentIds: [...(context.agentIds ?? []), event.id].slice(-AGENT_IDS),
        })),
      ],
    },
    'handoff.release': {
      target: 'idle',
      actions: [
        assign(({ context, event }) => ({ lastAt: Math.max(context.lastAt, event.at) })),
        emit(({ context, event }) => releasedOutput(context.human!, event.by, event.agentId, context.lastAt)),
        assign({ human: undefined }),
      ],
    },
    // A resolve is a release by the agent who resolved it, and says so (in the same output, so the same write).
    resolve: {
      target: 'idle',
      actions: [
        assign(({ context, event }) => ({ lastAt: Math.max(context.lastAt, event.at) })),
        emit(({ context, event }) => releasedOutput(context.human!, 'agent', event.by.agentId, context.lastAt, event.by)),
        assign({ human: undefined }),
      ],
    },
    restored: {
      target: 'withHuman',
      reenter: true,
      actions: assign({ lastAt: ({ event }) => event.at }),
    },
  },
});
