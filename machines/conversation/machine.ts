// One actor per customer conversation (customer × channel). Pure: the LLM
// step and the SDK invoke are injected actors, outputs leave as XState
// emitted events (`emit`, typed by `types.emitted`; the runtime listens with
// `actor.on('*', …)`), time arrives as `at` on every event.
//
//   idle → thinking (LLM) → nextCall → callingTool (SDK) ─┐
//                 ↑            ↘ awaitingConfirmation ──┤
//                 └────────────── (all calls done) ←────┘
//   thinking → replying → idle (next queued message, if any)
//   thinking ─(the model calls `handoff`)→ withHuman ─(an agent's release; or, when set, return_to_assistant time)→ idle
//   idle ─(handoff.request from the integrator; asked while busy: once the turn ends)→ withHuman
//   awaitingConfirmation ─(handoff.request)→ withHuman at once: the confirmation is cancelled, the turn ends
//
// In `withHuman` customer messages are stored and forwarded (`forward`), never given to the LLM;
// agent messages (`agent.message`) are the replies. Its deadlines (offline notice, optional hand-back: human.ts) are
// computed from times in context like the confirmation deadline, and re-armed on `restored` and by every agent message.
//
// Deadlines live in context (`turn.pending.deadline`), because XState does
// not restore `after` timers from a persisted snapshot: on `restored` the
// waiting state is re-entered and its timer re-armed with the time left.
//
// The parts: types.ts (input, context, events, outputs), setup.ts (actors, named actions, guards, delays),
// queue-states.ts (idle, gathering, starting), thinking.ts (thinking, replying), tool-states.ts (nextCall,
// awaitingConfirmation, callingTool), human-state.ts (withHuman); pure helpers in turn.ts, tool-results.ts, handoff.ts.
import { assign, emit } from 'xstate';
import { resolvedOf } from './handoff.ts';
import { withHuman } from './human-state.ts';
import { gathering, idle, starting } from './queue-states.ts';
import { conversationSetup } from './setup.ts';
import { replying, thinking } from './thinking.ts';
import { awaitingConfirmation, callingTool, nextCall } from './tool-states.ts';
import { RECENT_IDS } from './turn.ts';

export const conversationMachine = conversationSetup.createMachine({
  id: 'conversation',
  context: ({ input }) => Object.assign({}, input, { queue: [], recent: [], lastAt: 0 }),
  initial: 'idle',
  on: {
    'customer.message': {
      guard: 'isNewMessage',
      actions: assign(({ context, event }) => ({
        lastAt: event.at,
        queue: [...context.queue, { messageId: event.messageId, text: event.text, at: event.at }],
        recent: [...context.recent, event.messageId].slice(-RECENT_IDS),
      })),
    },
    restored: { actions: assign({ lastAt: ({ event }) => event.at }) },
    // Resolved while no person has it (`withHuman` releases instead): recorded, nothing else changes.
    resolve: { actions: emit(({ event }) => ({ type: 'resolved' as const, id: `v:${event.at}`, by: resolvedOf(event.by) })) },
    'handoff.request': {
      actions: assign(({ context, event }) => ({
        lastAt: Math.max(context.lastAt, event.at),
        handoffAsked: Object.assign(
          { at: event.at },
          event.reason === undefined ? {} : { reason: event.reason },
          event.agentId === undefined ? {} : { agentId: event.agentId },
        ),
      })),
    },
  },
  states: { idle, gathering, starting, withHuman, thinking, nextCall, awaitingConfirmation, callingTool, replying },
});
