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
import { and, assign, emit, enqueueActions, fromPromise, not, setup } from 'xstate';
import { humanDelay, humanDue, HUMAN_TIMER_CAP_MS, newHumanMode, type HumanMode } from './human.ts';

export type { HumanMode };

export type Channel = 'web' | 'whatsapp';

export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
  requiresConfirmation: boolean;
  summary: string;
}

export type TurnEntry =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text?: string; toolCalls: ToolCall[] }
  | { role: 'tool'; callId: string; name: string; ok: boolean; content: string };

export interface LlmStepInput {
  conversationId: string;
  customerId: string;
  turnId: string;
  step: number;
  transcript: TurnEntry[];
  /**
   * The reply of the turn a burst waited for: it may not be stored yet when this turn starts (it is written with the
   * next write), so the step adds it to the history it reads when the stored records do not have it yet.
   */
  previousReply?: { turnId: string; text: string };
}

export type LlmStepOutput =
  | { kind: 'reply'; text: string }
  | { kind: 'tools'; text?: string; calls: ToolCall[] }
  /** The model called the built-in `handoff` tool: a person takes the conversation over. */
  | { kind: 'handoff'; reason?: string };

export interface AgentAuthor {
  name: string;
  /** The signed-in agent who sent it (src/agents/); absent when a system sent it with the service secret. */
  agentId?: string;
}

/** The author as outputs carry it: the name, and the agent's id when there is one. */
const authorOf = (a: AgentAuthor): AgentAuthor => (a.agentId === undefined ? { name: a.name } : { name: a.name, agentId: a.agentId });

/** An actor's output stamped with the time it finished (from the runtime's injected clock). */
export type Timed<T> = T & { at: number };

export type InvokeOutcome = { ok: true; data: unknown } | { ok: false; error: { message: string; code?: string } };

export interface InvokeToolInput {
  invocationId: string;
  name: string;
  args: unknown;
  conversationId: string;
  customerId: string;
}

export type ConversationOutput =
  | { type: 'typing'; on: boolean }
  /** `replyTo` is the turn's first message; `answers` (when the turn answered a burst) every message it answered, in order. */
  | { type: 'reply'; id: string; turnId: string; text: string; replyTo: string; answers?: string[] }
  | { type: 'confirm'; id: string; turnId: string; name: string; args: unknown; summary: string }
  /** `cancelled`: a person took the conversation over while it waited (`reason: 'handoff'`); a late answer is refused. */
  | { type: 'confirmation'; id: string; turnId: string; name: string; outcome: 'approved' | 'denied' | 'expired' | 'cancelled'; reason?: 'handoff' }
  | { type: 'tool'; turnId: string; callId: string; name: string; phase: 'invoked'; args: unknown }
  /** `content` is exactly what the LLM is given for this call. */
  | { type: 'tool'; turnId: string; callId: string; name: string; phase: 'result' | 'failed'; content: string; durationMs?: number; error?: string }
  | { type: 'turn'; turnId: string; phase: 'started' | 'ended'; messageId: string }
  /** `id`s of handoff outputs are unique within the conversation: `h:<since>`, `r:<since>`, `j:<agent message id>`. */
  /** `agentId`: the signed-in agent who asked for it through the API. */
  | { type: 'handoff'; id: string; phase: 'requested'; source: 'model' | 'api'; reason?: string; turnId?: string; agentId?: string }
  /**
   * `by: 'idle'`: `handoff.return_to_assistant_after_minutes` passed without an agent message. `agentId`: who released
   * it; `lastAgentId`: the last signed-in agent who wrote; `durationMs`: since the handoff (time to resolution).
   */
  | { type: 'handoff'; id: string; phase: 'released'; by: 'agent' | 'idle'; agentId?: string; lastAgentId?: string; durationMs?: number }
  /**
   * The first message of an agent (or of another agent than the last one): "Alex joined". `waitedMs`: on the first
   * agent message of the handoff, how long the customer waited for it (time to first agent reply).
   */
  | { type: 'handoff'; id: string; phase: 'joined'; agent: AgentAuthor; waitedMs?: number }
  /** No agent wrote within `handoff.offline_after_minutes`: the customer is asked for an email address (once). */
  | { type: 'handoff'; id: string; phase: 'offline' }
  | { type: 'agent'; id: string; text: string; author: AgentAuthor }
  /** A customer message while with a person: stored, and forwarded to the integrator instead of the LLM. */
  | { type: 'forward'; messageId: string; text: string };

export interface ConversationInput {
  conversationId: string;
  customerId: string;
  channel: Channel;
  maxToolSteps: number;
  confirmationTimeoutMs: number;
  /** With a person: no agent message this long after the handoff → the `offline` notice (absent: never). */
  offlineAfterMs?: number;
  /** With a person: given back to the assistant after this long without an agent message (absent: never). */
  returnAfterMs?: number;
  /**
   * The gathering window: a turn starts this long after the last of a burst of customer messages (at most
   * GATHER_CAP windows after the first), so the burst is answered by one turn. 0: at once. Absent in old snapshots.
   */
  gatherMs?: number;
  /** false: a turn takes one queued message (one reply per message). Absent (old snapshots): true. */
  bursts?: boolean;
}

export type ConversationEvent =
  | { type: 'customer.message'; at: number; messageId: string; text: string }
  | { type: 'customer.confirm'; at: number; confirmationId: string; approve: boolean }
  | { type: 'restored'; at: number }
  /** `agentId`: the signed-in agent who asked (src/agents/). */
  | { type: 'handoff.request'; at: number; reason?: string; agentId?: string }
  /** `agentId`: the signed-in agent who released it (src/agents/). */
  | { type: 'handoff.release'; at: number; by: 'agent' | 'idle'; agentId?: string }
  | { type: 'agent.message'; at: number; id: string; text: string; author: AgentAuthor };

interface QueuedMessage {
  messageId: string;
  text: string;
  at: number;
}

export interface Turn {
  turnId: string;
  /** The first message the turn answers (its id names the turn). */
  messageId: string;
  /** Every message the turn answers, in order (absent in snapshots from before bursts: `[messageId]`). */
  messageIds?: string[];
  step: number;
  transcript: TurnEntry[];
  calls: ToolCall[];
  callIndex: number;
  callStartedAt?: number;
  pending?: { confirmationId: string; deadline: number };
  replyText?: string;
  /** See LlmStepInput.previousReply. */
  previousReply?: { turnId: string; text: string };
}

export interface ConversationContext extends ConversationInput {
  queue: QueuedMessage[];
  /** Recently processed or queued message ids: a re-sent message is not answered twice. */
  recent: string[];
  lastAt: number;
  turn?: Turn;
  /** Set while a person has the conversation. */
  human?: HumanMode;
  /** The reply of the turn that just ended while messages waited (handed to the next turn, then dropped). */
  lastReply?: { turnId: string; text: string };
  /** The integrator asked for a person while a turn ran: handed over when it ends. */
  handoffAsked?: { reason?: string; at: number; agentId?: string };
  /**
   * The last agent message ids: a retried agent message (same idempotency key, so the same id) is shown once. Stored
   * with the snapshot in every write, so whichever node owns the conversation next knows them too.
   */
  agentIds?: string[];
}

// Only messages not yet durable need the actor's memory: once stored, the durable seen-set (checked
// before the actor and inside the write) is the authority. A few ids cover the commit lag; each one is
// carried in every snapshot write.
const RECENT_IDS = 8;
/** A burst that keeps going starts its turn at the latest this many windows after its first message. */
export const GATHER_CAP = 4;
const AGENT_IDS = 32;
const MAX_TOOL_CONTENT = 8000;

export const APOLOGY_LLM_FAILED = "Sorry — I'm having trouble right now. Please try again in a moment.";
export const APOLOGY_TOO_MANY_STEPS = "Sorry, I couldn't complete that request. Please try again or rephrase it.";
export const DECLINED_CONTENT = 'The customer declined this action; it was not carried out.';
export const EXPIRED_CONTENT = 'The customer did not confirm in time; the action was cancelled and not carried out.';

export const UNREADABLE_RESULT = 'Error (unreadable_result): the function answered with data that could not be read (too deeply nested or not JSON).';

/** The text the LLM gets for a call's outcome. Never throws: a hostile result must not take the conversation down. */
export function toolContent(outcome: InvokeOutcome): string {
  let text: string;
  try {
    text = outcome.ok
      ? typeof outcome.data === 'string'
        ? outcome.data
        : (JSON.stringify(outcome.data ?? null) ?? 'null')
      : `Error${outcome.error.code ? ` (${outcome.error.code})` : ''}: ${outcome.error.message}`;
  } catch {
    return UNREADABLE_RESULT;
  }
  return text.length > MAX_TOOL_CONTENT ? `${text.slice(0, MAX_TOOL_CONTENT)}…` : text;
}

/** True when this client message id was already queued or answered (a re-sent message is not answered twice). */
export const isKnownMessage = (context: Pick<ConversationContext, 'recent'>, messageId: string) => context.recent.includes(messageId);

/** The id of a turn's reply: known before the reply is written, so its live text can be streamed under it. */
export const replyIdFor = (turnId: string) => `${turnId}:r`;

/** When the queued burst's gathering window closes (undefined: no window, or nothing queued). */
export function gatherDue(c: Pick<ConversationContext, 'queue' | 'gatherMs'>): number | undefined {
  const ms = c.gatherMs ?? 0;
  if (ms <= 0 || c.queue.length === 0) return undefined;
  return Math.min(c.queue[c.queue.length - 1].at + ms, c.queue[0].at + GATHER_CAP * ms);
}

const answersOf = (turn: Turn) => turn.messageIds ?? [turn.messageId];

const currentCall = (c: ConversationContext): ToolCall => c.turn!.calls[c.turn!.callIndex];
const invocationIdFor = (turn: Turn, call: ToolCall) => `${turn.turnId}:${turn.step}:${call.id}`;

export const conversationMachine = setup({
  types: {
    input: {} as ConversationInput,
    context: {} as ConversationContext,
    events: {} as ConversationEvent,
    emitted: {} as ConversationOutput,
  },
  actors: {
    llm: fromPromise<Timed<LlmStepOutput>, LlmStepInput>(async () => {
      throw new Error('llm actor not provided');
    }),
    invokeTool: fromPromise<Timed<InvokeOutcome>, InvokeToolInput>(async () => {
      throw new Error('invokeTool actor not provided');
    }),
  },
  actions: {
    /** Messages that waited for the assistant when a person took over go to the person instead. */
    forwardQueued: enqueueActions(({ context, enqueue }) => {
      for (const m of context.queue) enqueue.emit({ type: 'forward', messageId: m.messageId, text: m.text });
    }),
    /**
     * A handoff while a confirmation waits (or is about to be asked): the confirmation is cancelled (none is asked),
     * the turn ends, a person has it.
     */
    cancelForHandoff: enqueueActions(({ context, event, enqueue }) => {
      const turn = context.turn!;
      const call = turn.calls[turn.callIndex];
      const at = event.type === 'handoff.request' ? Math.max(context.lastAt, event.at) : context.lastAt;
      const asked = event.type === 'handoff.request' ? event : context.handoffAsked;
      const reason = asked?.reason;
      const human = newHumanMode(at, 'api', reason, asked?.agentId);
      if (turn.pending)
        enqueue.emit({ type: 'confirmation', id: turn.pending.confirmationId, turnId: turn.turnId, name: call.name, outcome: 'cancelled', reason: 'handoff' });
      enqueue.emit(requestedOutput(human));
      enqueue.emit({ type: 'turn', turnId: turn.turnId, phase: 'ended', messageId: turn.messageId });
      for (const m of context.queue) enqueue.emit({ type: 'forward', messageId: m.messageId, text: m.text });
      enqueue.assign({ lastAt: at, human, handoffAsked: undefined, turn: undefined, queue: [] });
    }),
    /** "Alex joined": an agent's first message, or another agent's than the last one's. */
    agentJoined: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'agent.message' || context.human?.agent?.name === event.author.name) return;
      const first = context.human !== undefined && context.human.agent === undefined;
      enqueue.emit(
        Object.assign(
          { type: 'handoff' as const, id: `j:${event.id}`, phase: 'joined' as const, agent: authorOf(event.author) },
          first ? { waitedMs: Math.max(0, event.at - context.human!.since) } : {},
        ),
      );
    }),
  },
  guards: {
    isNewMessage: ({ context, event }) => event.type === 'customer.message' && !isKnownMessage(context, event.messageId),
    hasQueued: ({ context }) => context.queue.length > 0,
    matchesPending: ({ context, event }) => event.type === 'customer.confirm' && context.turn?.pending?.confirmationId === event.confirmationId,
    approved: ({ event }) => event.type === 'customer.confirm' && event.approve,
    callsDone: ({ context }) => context.turn!.callIndex >= context.turn!.calls.length,
    needsConfirmation: ({ context }) => currentCall(context).requiresConfirmation,
    handoffAsked: ({ context }) => context.handoffAsked !== undefined,
    gathering: ({ context }) => (gatherDue(context) ?? 0) > context.lastAt,
    isNewAgentMessage: ({ context, event }) => event.type === 'agent.message' && !(context.agentIds ?? []).includes(event.id),
  },
  delays: {
    confirmationLeft: ({ context }) => Math.max(0, (context.turn?.pending?.deadline ?? context.lastAt) - context.lastAt),
    gatherLeft: ({ context }) => Math.max(0, (gatherDue(context) ?? context.lastAt) - context.lastAt),
    humanLeft: ({ context }) => humanDelay(context.human, context, context.lastAt),
  },
}).createMachine({
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
  states: {
    idle: {
      always: [
        {
          guard: 'handoffAsked',
          target: 'withHuman',
          actions: [
            'forwardQueued',
            assign(({ context }) => ({
              human: newHumanMode(context.lastAt, 'api', context.handoffAsked!.reason, context.handoffAsked!.agentId),
              handoffAsked: undefined,
              queue: [],
            })),
            emit(({ context }) => requestedOutput(context.human!)),
          ],
        },
        { guard: and(['hasQueued', 'gathering']), target: 'gathering' },
        { guard: 'hasQueued', target: 'starting' },
      ],
    },

    // A burst is gathering: its turn starts when the window closes; each new message re-arms it. The due time is
    // computed from the queued messages' times (in the snapshot), so `restored` re-arms it with the time left.
    gathering: {
      always: [
        { guard: 'handoffAsked', target: 'idle' },
        // Restored after its due time: no timer needed.
        { guard: not('gathering'), target: 'starting' },
      ],
      after: {
        gatherLeft: { target: 'starting', actions: assign(({ context }) => ({ lastAt: Math.max(context.lastAt, gatherDue(context) ?? context.lastAt) })) },
      },
      on: {
        'customer.message': {
          guard: 'isNewMessage',
          target: 'gathering',
          reenter: true,
          actions: assign(({ context, event }) => ({
            lastAt: event.at,
            queue: [...context.queue, { messageId: event.messageId, text: event.text, at: event.at }],
            recent: [...context.recent, event.messageId].slice(-RECENT_IDS),
          })),
        },
        restored: { target: 'gathering', reenter: true, actions: assign({ lastAt: ({ event }) => event.at }) },
      },
    },

    // Every queued message goes into one turn (a burst is answered together, in order); transient.
    starting: {
      always: {
        target: 'thinking',
        actions: [
          assign(({ context }) => {
            const batch = context.bursts === false ? context.queue.slice(0, 1) : context.queue;
            const [first] = batch;
            const turnId = `${context.conversationId}:${first.messageId}`;
            return {
              queue: context.queue.slice(batch.length),
              turn: {
                turnId,
                messageId: first.messageId,
                messageIds: batch.map((m) => m.messageId),
                step: 1,
                transcript: batch.map((m) => ({ role: 'user' as const, text: m.text })),
                calls: [],
                callIndex: 0,
                ...(context.lastReply ? { previousReply: context.lastReply } : {}),
              },
              lastReply: undefined,
            };
          }),
          emit(({ context }) => ({ type: 'turn', turnId: context.turn!.turnId, phase: 'started', messageId: context.turn!.messageId })),
          emit({ type: 'typing', on: true }),
        ],
      },
    },

    withHuman: {
      after: {
        // What `humanDue` says is due now (human.ts); nothing due (the capped wait passed): armed again.
        humanLeft: [
          {
            guard: ({ context }) => humanDue(context.human, context)?.kind === 'offline',
            target: 'withHuman',
            reenter: true,
            actions: [
              emit(({ context }) => ({ type: 'handoff', id: `o:${context.human!.since}`, phase: 'offline' })),
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
        restored: {
          target: 'withHuman',
          reenter: true,
          actions: assign({ lastAt: ({ event }) => event.at }),
        },
      },
    },

    thinking: {
      invoke: {
        src: 'llm',
        input: ({ context }) => ({
          conversationId: context.conversationId,
          customerId: context.customerId,
          turnId: context.turn!.turnId,
          step: context.turn!.step,
          transcript: context.turn!.transcript,
          ...(context.turn!.previousReply ? { previousReply: context.turn!.previousReply } : {}),
        }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'handoff',
            target: 'withHuman',
            actions: [
              assign(({ context, event }) => {
                const at = Math.max(context.lastAt, event.output.at);
                const reason = (event.output as { reason?: string }).reason;
                return { lastAt: at, handoffAsked: undefined, human: newHumanMode(at, 'model', reason) };
              }),
              emit({ type: 'typing', on: false }),
              emit(({ context }) =>
                withReason(
                  { type: 'handoff', id: `h:${context.human!.since}`, phase: 'requested', source: 'model', turnId: context.turn!.turnId } as const,
                  context.human!.reason,
                ),
              ),
              emit(({ context }) => ({ type: 'turn', turnId: context.turn!.turnId, phase: 'ended', messageId: context.turn!.messageId })),
              'forwardQueued',
              assign({ turn: undefined, queue: [] }),
            ],
          },
          {
            guard: ({ event }) => event.output.kind === 'reply',
            target: 'replying',
            actions: assign(({ context, event }) => ({
              lastAt: event.output.at,
              turn: Object.assign({}, context.turn!, { replyText: (event.output as { text: string }).text }),
            })),
          },
          {
            // At most maxToolSteps LLM steps per turn: the last one may only answer.
            guard: ({ context }) => context.turn!.step >= context.maxToolSteps,
            target: 'replying',
            actions: assign(({ context, event }) => ({
              lastAt: event.output.at,
              turn: Object.assign({}, context.turn!, { replyText: APOLOGY_TOO_MANY_STEPS }),
            })),
          },
          {
            target: 'nextCall',
            // lastAt becomes the time the LLM answered: a confirmation asked now gets its full timeout.
            actions: assign(({ context, event }) => {
              const out = event.output as Timed<Extract<LlmStepOutput, { kind: 'tools' }>>;
              return {
                lastAt: out.at,
                turn: Object.assign({}, context.turn!, {
                  calls: out.calls,
                  callIndex: 0,
                  transcript: [...context.turn!.transcript, { role: 'assistant' as const, text: out.text, toolCalls: out.calls }],
                }),
              };
            }),
          },
        ],
        onError: {
          target: 'replying',
          actions: assign(({ context }) => ({ turn: Object.assign({}, context.turn!, { replyText: APOLOGY_LLM_FAILED }) })),
        },
      },
    },

    nextCall: {
      always: [
        {
          guard: 'callsDone',
          target: 'thinking',
          actions: assign(({ context }) => ({ turn: Object.assign({}, context.turn!, { step: context.turn!.step + 1, calls: [], callIndex: 0 }) })),
        },
        // Asked for a person earlier in this turn: handed over instead of asking the customer to confirm.
        { guard: and(['needsConfirmation', 'handoffAsked']), target: 'withHuman', actions: 'cancelForHandoff' },
        {
          guard: 'needsConfirmation',
          target: 'awaitingConfirmation',
          actions: [
            assign(({ context }) => {
              const call = currentCall(context);
              return {
                turn: Object.assign({}, context.turn!, {
                  pending: { confirmationId: invocationIdFor(context.turn!, call), deadline: context.lastAt + context.confirmationTimeoutMs },
                }),
              };
            }),
            emit(({ context }) => {
              const call = currentCall(context);
              return {
                type: 'confirm',
                id: context.turn!.pending!.confirmationId,
                turnId: context.turn!.turnId,
                name: call.name,
                args: call.args,
                summary: call.summary,
              };
            }),
            // The customer's turn now: no typing indicator while we wait.
            emit({ type: 'typing', on: false }),
          ],
        },
        {
          target: 'callingTool',
          actions: [
            assign(({ context }) => ({ turn: Object.assign({}, context.turn!, { callStartedAt: context.lastAt }) })),
            emit(({ context }) => toolInvoked(context)),
          ],
        },
      ],
    },

    awaitingConfirmation: {
      // Asked while the turn ran (before this confirmation): handed over now rather than after the customer answers.
      always: { guard: 'handoffAsked', target: 'withHuman', actions: 'cancelForHandoff' },
      after: {
        confirmationLeft: {
          target: 'nextCall',
          actions: [
            emit(({ context }) => ({
              type: 'confirmation',
              id: context.turn!.pending!.confirmationId,
              turnId: context.turn!.turnId,
              name: currentCall(context).name,
              outcome: 'expired',
            })),
            assign(({ context }) => ({
              lastAt: Math.max(context.lastAt, context.turn!.pending!.deadline),
              turn: skipCall(context, EXPIRED_CONTENT),
            })),
          ],
        },
      },
      on: {
        'customer.confirm': [
          {
            guard: and(['matchesPending', 'approved']),
            target: 'callingTool',
            actions: [
              emit(({ context }) => ({
                type: 'confirmation',
                id: context.turn!.pending!.confirmationId,
                turnId: context.turn!.turnId,
                name: currentCall(context).name,
                outcome: 'approved',
              })),
              assign(({ context, event }) => ({ lastAt: event.at, turn: Object.assign({}, context.turn!, { pending: undefined, callStartedAt: event.at }) })),
              emit({ type: 'typing', on: true }),
              emit(({ context }) => toolInvoked(context)),
            ],
          },
          {
            guard: 'matchesPending',
            target: 'nextCall',
            actions: [
              emit({ type: 'typing', on: true }),
              emit(({ context }) => ({
                type: 'confirmation',
                id: context.turn!.pending!.confirmationId,
                turnId: context.turn!.turnId,
                name: currentCall(context).name,
                outcome: 'denied',
              })),
              assign(({ context, event }) => ({ lastAt: event.at, turn: skipCall(context, DECLINED_CONTENT) })),
            ],
          },
        ],
        // A person takes over now: the write waiting for the customer's yes is cancelled (a late answer is refused).
        'handoff.request': { target: 'withHuman', actions: 'cancelForHandoff' },
        restored: {
          target: 'awaitingConfirmation',
          reenter: true,
          actions: assign({ lastAt: ({ event }) => event.at }),
        },
      },
    },

    callingTool: {
      invoke: {
        src: 'invokeTool',
        input: ({ context }) => {
          const call = currentCall(context);
          return {
            invocationId: invocationIdFor(context.turn!, call),
            name: call.name,
            args: call.args,
            conversationId: context.conversationId,
            customerId: context.customerId,
          };
        },
        onDone: {
          target: 'nextCall',
          actions: [
            assign(({ context, event }) => recordResult(context, event.output, event.output.at)),
            emit(({ context, event }) => toolFinished(context, event.output, event.output.at)),
          ],
        },
        onError: {
          target: 'nextCall',
          actions: [
            assign(({ context, event }) => recordResult(context, invokeError(event.error))),
            emit(({ context, event }) => toolFinished(context, invokeError(event.error))),
          ],
        },
      },
    },

    replying: {
      always: {
        target: 'idle',
        actions: [
          emit(({ context }) => ({
            type: 'reply',
            id: replyIdFor(context.turn!.turnId),
            turnId: context.turn!.turnId,
            text: context.turn!.replyText ?? '',
            replyTo: context.turn!.messageId,
            ...(answersOf(context.turn!).length > 1 ? { answers: answersOf(context.turn!) } : {}),
          })),
          emit({ type: 'typing', on: false }),
          emit(({ context }) => ({ type: 'turn', turnId: context.turn!.turnId, phase: 'ended', messageId: context.turn!.messageId })),
          // Messages wait for the next turn: it starts before this reply is stored, and must see it.
          assign(({ context }) => ({
            turn: undefined,
            lastReply: context.queue.length > 0 ? { turnId: context.turn!.turnId, text: context.turn!.replyText ?? '' } : undefined,
          })),
        ],
      },
    },
  },
});

/**
 * What the runtime records when it has to abandon a turn it cannot make durable: the pending
 * confirmation (if any) is cancelled, and the customer gets the apology instead of an answer.
 */
export function abandonedTurnOutputs(turn: Turn | undefined): ConversationOutput[] {
  if (!turn) return [];
  const out: ConversationOutput[] = [];
  const call = turn.calls[turn.callIndex];
  if (turn.pending && call) out.push({ type: 'confirmation', id: turn.pending.confirmationId, turnId: turn.turnId, name: call.name, outcome: 'expired' });
  const answers = answersOf(turn);
  out.push({
    type: 'reply',
    id: replyIdFor(turn.turnId),
    turnId: turn.turnId,
    text: APOLOGY_LLM_FAILED,
    replyTo: turn.messageId,
    ...(answers.length > 1 ? { answers } : {}),
  });
  out.push({ type: 'turn', turnId: turn.turnId, phase: 'ended', messageId: turn.messageId });
  return out;
}

function requestedOutput(human: HumanMode): ConversationOutput {
  const o = withReason({ type: 'handoff', id: `h:${human.since}`, phase: 'requested', source: 'api' } as const, human.reason);
  return human.requestedBy === undefined ? o : Object.assign(o, { agentId: human.requestedBy });
}

function releasedOutput(human: HumanMode, by: 'agent' | 'idle', agentId: string | undefined, at: number): ConversationOutput {
  const o: Extract<ConversationOutput, { phase: 'released' }> = { type: 'handoff', id: `r:${human.since}`, phase: 'released', by };
  if (agentId !== undefined) o.agentId = agentId;
  if (human.agent?.agentId !== undefined) o.lastAgentId = human.agent.agentId;
  o.durationMs = Math.max(0, at - human.since);
  return o;
}

function withReason<T extends object>(o: T, reason: string | undefined): T & { reason?: string } {
  return reason === undefined ? o : Object.assign({}, o, { reason });
}

function toolInvoked(context: ConversationContext): ConversationOutput {
  const call = currentCall(context);
  return { type: 'tool', turnId: context.turn!.turnId, callId: call.id, name: call.name, phase: 'invoked', args: call.args };
}

const invokeError = (error: unknown): InvokeOutcome => ({ ok: false, error: { message: String((error as Error)?.message ?? error) } });

/** After recordResult: the call's tool entry is the last one in the transcript. */
function toolFinished(context: ConversationContext, outcome: InvokeOutcome, at?: number): ConversationOutput {
  const turn = context.turn!;
  const entry = turn.transcript[turn.transcript.length - 1] as Extract<TurnEntry, { role: 'tool' }>;
  return {
    type: 'tool',
    turnId: turn.turnId,
    callId: entry.callId,
    name: entry.name,
    phase: entry.ok ? 'result' : 'failed',
    content: entry.content,
    ...(at !== undefined && turn.callStartedAt !== undefined ? { durationMs: Math.max(0, at - turn.callStartedAt) } : {}),
    ...(entry.ok ? {} : { error: outcome.ok ? 'unreadable result' : outcome.error.message }),
  };
}

function toolEntry(call: ToolCall, outcome: InvokeOutcome): TurnEntry {
  const content = toolContent(outcome);
  return { role: 'tool', callId: call.id, name: call.name, ok: outcome.ok && content !== UNREADABLE_RESULT, content };
}

function recordResult(context: ConversationContext, outcome: InvokeOutcome, at = context.lastAt): Partial<ConversationContext> {
  const turn = context.turn!;
  const call = turn.calls[turn.callIndex];
  return {
    lastAt: Math.max(context.lastAt, at),
    turn: Object.assign({}, turn, { callIndex: turn.callIndex + 1, transcript: [...turn.transcript, toolEntry(call, outcome)] }),
  };
}

function skipCall(context: ConversationContext, content: string): Turn {
  const turn = context.turn!;
  const call = turn.calls[turn.callIndex];
  return Object.assign({}, turn, {
    pending: undefined,
    callIndex: turn.callIndex + 1,
    transcript: [...turn.transcript, { role: 'tool', callId: call.id, name: call.name, ok: false, content }],
  });
}
