// The `llm` actor the conversation machine invokes: prepends the system
// prompt and stored history to the turn's transcript, offers the SDK catalog
// as tools, records one turn-call per LLM call, and streams the reply's text
// live as it is written (reply-stream.ts).
import { replyIdFor, type LlmStepInput, type LlmStepOutput, type Timed, type TurnEntry } from '../../machines/conversation.ts';
import { HANDOFF_REASONS } from '../../sdk/src/agent-api.ts';
import type { Config } from '../config/schema.ts';
import type { ObservedLlmRequest } from '../llm/resilient.ts';
import { answeredCall, failedAttemptCall, failedCall } from '../llm/turn-call.ts';
import type { ChatMessage, LlmProvider, ToolSpec } from '../llm/types.ts';
import type { SdkHub, Services } from '../services.ts';
import { isVisitorCustomerId, type MessageRecord } from '../store/model.ts';
import type { HistoryStore } from '../store/repos.ts';
import { conversationLocale } from '../customers/locale.ts';
import { conversationIdFor } from './history.ts';
import { localizedSummary } from './localized-summary.ts';
import { createReplyStream, type ReplyDelta } from './reply-stream.ts';
import { citeSources, dontKnowReply } from '../knowledge/citations.ts';
import { SEARCH_TOOL_NAME } from '../knowledge/results.ts';
import { searchEvent } from '../knowledge/search-events.ts';
import { createLoopPacer, type LoopPacer } from '../runtime/loop-pacer.ts';

/** The reply when the model wrote nothing. */
export const NO_ANSWER = "Sorry, I don't have an answer for that.";

/** What a running step may do besides answering: be cancelled, and show its reply as it is written. */
export interface LiveStep {
  signal?: AbortSignal;
  onDelta?: (delta: ReplyDelta) => void;
}

export const DEFAULT_SYSTEM_PROMPT =
  "You are a customer support assistant. Use the available tools to look up or change the customer's data; " +
  'answer only from what the tools and the knowledge base return, and never invent facts, links or policies. ' +
  'If a tool fails or an action is declined, say so plainly. Keep answers short and friendly.';

/** Told to the model when `search_knowledge` is offered (issue 36). */
export const KNOWLEDGE_PROMPT =
  "For questions about the company's policies, products, orders, shipping, returns, payments or accounts, call search_knowledge first " +
  'and answer only from its results, citing each fact with the number of its result, like [1]. If nothing relevant is found, ' +
  "say you don't know and offer to connect the customer with a person; never guess.";

/** The built-in tool offered with `handoff.enabled`: calling it hands the conversation to a person (never reaches the SDK). */
export const HANDOFF_TOOL: ToolSpec = {
  name: 'handoff',
  description:
    'Hand the conversation over to a person from the support team (a human agent). Call it when the customer asks for a human, ' +
    'a person, an agent or an operator, or when you cannot help and a person should.',
  parameters: {
    type: 'object',
    properties: {
      reason: { type: 'string', description: 'Why, in a few words' },
      category: {
        type: 'string',
        enum: [...HANDOFF_REASONS],
        description:
          'The kind of reason: customer_asked (they asked for a person), missing_knowledge (you do not know the answer), ' +
          'unsupported_request (nothing you can do does it), tool_failure (a function failed), policy (a person must decide), other',
      },
    },
  },
};

/** The handoff's reason as stored: the category first when the model names one (`policy: refund over the limit`). */
export function handoffReason(args: unknown): string | undefined {
  const a = (args ?? {}) as { reason?: unknown; category?: unknown };
  const text = typeof a.reason === 'string' ? a.reason.trim() : '';
  const category = typeof a.category === 'string' && (HANDOFF_REASONS as readonly string[]).includes(a.category) ? a.category : undefined;
  const reason = category ? (text ? `${category}: ${text}` : category) : text;
  return reason ? reason.slice(0, 500) : undefined;
}

/** What the model reads for a stored record: agents' messages and handoffs are part of the conversation it resumes. */
export function pastMessage(r: MessageRecord): ChatMessage | undefined {
  if (r.role === 'user') return { role: 'user', content: r.text };
  if (r.role === 'assistant') return { role: 'assistant', content: r.text };
  if (r.role === 'agent') {
    const name = (r.data?.author as { name?: string } | undefined)?.name ?? 'An agent';
    return { role: 'assistant', content: `[${name}, a person from the support team, wrote:] ${r.text}` };
  }
  if (r.role === 'handoff') {
    const d = r.data ?? {};
    if (d.phase === 'requested')
      return {
        role: 'system',
        content: `The conversation was handed over to a person from the support team${typeof d.reason === 'string' ? ` (reason: ${d.reason})` : ''}. The assistant did not answer while they had it.`,
      };
    if (d.phase === 'released')
      return {
        role: 'system',
        content:
          d.by === 'idle'
            ? 'No person answered for a while: the assistant has the conversation again. Pick up where things stand.'
            : 'The person released the conversation: the assistant has it again. Pick up where things stand.',
      };
  }
  return undefined;
}

/** Told to the model on a visitor's turns (after the system prompt). */
export const VISITOR_PROMPT =
  'This customer has not signed in (a visitor): you cannot see or change their account, orders or other data. ' +
  'When they ask for something that needs it, ask them to sign in first; after signing in, this conversation continues.';

/** Told to the model when the customer's locale is known (after the system prompt). */
export const localePrompt = (locale: string) => `Answer in the customer's language: ${locale} (their locale), unless they write to you in another language.`;

/** A function a visitor's turn may be offered (and call): exposed with `visitors: true`, and only ever a `read` one. */
export const visitorMayUse = (f: { mode: string; visitors?: boolean }) => f.visitors === true && f.mode === 'read';

export function requiresConfirmation(mode: string | undefined, name: string, config: Config): boolean {
  return mode === 'write' || mode === 'destructive' || config.safety.require_confirmation_for.includes(name);
}

function transcriptToMessages(transcript: TurnEntry[]): ChatMessage[] {
  return transcript.map((e): ChatMessage => {
    if (e.role === 'user') return { role: 'user', content: e.text };
    if (e.role === 'assistant')
      return { role: 'assistant', content: e.text ?? null, toolCalls: e.toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.args })) };
    return { role: 'tool', toolCallId: e.callId, name: e.name, content: e.content };
  });
}

export function createLlmStep(deps: { services: Services; llm: LlmProvider; hub: SdkHub; history: HistoryStore; pacer?: LoopPacer }) {
  const { services, llm, hub, history } = deps;
  // Many turns started by one commit open their model calls one per turn of the event loop (loop-pacer.ts).
  const pacer = deps.pacer ?? createLoopPacer();
  const { config } = services;

  // The conversation as the LLM sees it: the last customer and assistant messages, kept per active
  // conversation and extended with the records stored since the last step (a turn reads a few new
  // records, not the whole window; tool records, which now sit between the messages, are skipped).
  // Reading by sequence also picks up messages other writers appended (proactive sends).
  const keep = config.session.history_window + 10;
  const windows = new Map<string, { seq: number; entries: { turnId?: string; message: ChatMessage }[] }>();
  const add = (entries: { turnId?: string; message: ChatMessage }[], r: MessageRecord) => {
    const message = pastMessage(r);
    if (message) entries.push({ turnId: r.turnId, message });
  };
  const pastFor = async (input: LlmStepInput): Promise<ChatMessage[]> => {
    let w = windows.get(input.conversationId);
    if (!w) {
      // One read gives the records and where they end, so the next step's `since` neither skips nor repeats one.
      // Tool and confirmation records sit between the messages: read enough to keep `keep` messages.
      const page = await history.page(input.conversationId, { limit: keep * 4 });
      const entries: { turnId?: string; message: ChatMessage }[] = [];
      for (const { record } of page) add(entries, record);
      w = { seq: page.length ? page[page.length - 1].seq : 0, entries: entries.slice(-keep) };
      windows.set(input.conversationId, w);
    } else {
      for (const { seq, record } of await history.since(input.conversationId, w.seq)) {
        w.seq = seq;
        add(w.entries, record);
      }
      if (w.entries.length > keep) w.entries.splice(0, w.entries.length - keep);
    }
    // Everything before this turn's own records (its customer messages are already stored, and are in its
    // transcript); after its first message, customer messages are this turn's or a later one's, but the rest (the
    // reply of the turn that ran while they waited, an agent's message) came before this turn and is kept.
    const past: ChatMessage[] = [];
    let mine = false;
    let previousStored = false;
    for (const e of w.entries) {
      if (e.turnId === input.turnId) mine = true;
      if (e.turnId === input.previousReply?.turnId && e.message.role === 'assistant') previousStored = true;
      if (!mine || e.message.role !== 'user') past.push(e.message);
    }
    if (input.previousReply && !previousStored) past.push({ role: 'assistant', content: input.previousReply.text });
    return past;
  };

  // The customer's locale, read once per turn (a new session may have changed it): conversation id → turn, locale.
  const locales = new Map<string, { turnId: string; locale: string | undefined }>();
  const localeFor = async (input: LlmStepInput): Promise<string | undefined> => {
    const known = locales.get(input.conversationId);
    if (known?.turnId === input.turnId) return known.locale;
    const channel = input.conversationId === conversationIdFor(input.customerId, 'whatsapp') ? 'whatsapp' : 'web';
    const locale = conversationLocale(await services.store.customers.get(input.customerId), channel, config.channels.whatsapp.locale);
    locales.set(input.conversationId, { turnId: input.turnId, locale });
    return locale;
  };
  const ask = (name: string, args: unknown, locale: string) =>
    hub.summarize ? hub.summarize(name, args, locale, config.sdk.summary_timeout_ms) : Promise.resolve(undefined);
  // Each knowledge search of the turn, once its reply is known (so each hit says whether it was cited).
  const recordSearches = (input: LlmStepInput, searches: ReturnType<typeof citeSources>['searches']) => {
    for (const s of searches)
      services.telemetry.event(
        Object.assign({ type: 'knowledge.search' }, searchEvent(s, input, config.telemetry.store_text), {
          conversationId: input.conversationId,
          customerId: input.customerId,
        }),
      );
  };
  // Only citations of this turn's search results stay, numbered anew; nothing found: "I don't know", and a person offered.
  const replyWithSources = (input: LlmStepInput, text: string, at: number): Timed<LlmStepOutput> => {
    const cited = citeSources(input.transcript, text);
    recordSearches(input, cited.searches);
    if (cited.nothingFound) return { kind: 'reply', text: dontKnowReply(config.handoff.enabled), unanswered: true, at };
    return cited.sources.length ? { kind: 'reply', text: cited.text, sources: cited.sources, at } : { kind: 'reply', text: cited.text, at };
  };

  const step = async (input: LlmStepInput, live: LiveStep = {}): Promise<Timed<LlmStepOutput>> => {
    const handoff = config.handoff.enabled;
    // The built-in `handoff` wins over an SDK function of the same name.
    const visitor = isVisitorCustomerId(input.customerId);
    const catalog = hub.catalog().filter((f) => !(handoff && f.name === HANDOFF_TOOL.name) && (!visitor || visitorMayUse(f)));
    const tools: ToolSpec[] = catalog.map((f) => ({ name: f.name, description: f.description, parameters: f.parameters }));
    if (handoff) tools.push(HANDOFF_TOOL);
    const [past, locale] = await Promise.all([pastFor(input), localeFor(input)]);
    const messages: ChatMessage[] = [
      { role: 'system', content: config.llm.system_prompt ?? DEFAULT_SYSTEM_PROMPT },
      ...(locale ? [{ role: 'system' as const, content: localePrompt(locale) }] : []),
      ...(visitor ? [{ role: 'system' as const, content: VISITOR_PROMPT }] : []),
      ...(tools.some((t) => t.name === SEARCH_TOOL_NAME) ? [{ role: 'system' as const, content: KNOWLEDGE_PROMPT }] : []),
      ...past.slice(-config.session.history_window),
      ...transcriptToMessages(input.transcript),
    ];
    await pacer.next();
    const started = services.clock.now();
    const base = { turnId: input.turnId, conversationId: input.conversationId, customerId: input.customerId, sequence: input.step, purpose: 'chat' as const };
    // Each failed attempt (a retry or the fallback follows, or the last one) is its own turn-call.
    let failedAttempts = 0;
    const stream = live.onDelta ? createReplyStream(replyIdFor(input.turnId), live.onDelta) : undefined;
    const req: ObservedLlmRequest = {
      messages,
      tools,
      purpose: 'chat',
      signal: live.signal,
      onText: stream?.append,
      onAttemptFailed: (a) => {
        // What this attempt showed will not be the reply: the retry or the fallback writes it anew.
        stream?.takeBack();
        failedAttempts++;
        services.telemetry.turnCall(Object.assign(failedAttemptCall(a), base));
      },
    };
    try {
      const res = await llm.complete(req);
      // Every piece is out before the step's output can reach a channel (the final message follows the deltas).
      stream?.flush();
      services.telemetry.turnCall(
        Object.assign(
          answeredCall(
            res,
            res.toolCalls.map((c) => c.name),
          ),
          base,
        ),
      );
      const at = services.clock.now();
      // Text written before tool calls is not the reply (the next step writes that).
      if (res.toolCalls.length > 0) stream?.takeBack();
      if (res.toolCalls.length === 0) {
        const text = res.text?.trim();
        const reply = replyWithSources(input, text || NO_ANSWER, at);
        return text ? reply : Object.assign(reply, { unanswered: true as const });
      }
      const wantsPerson = handoff ? res.toolCalls.find((c) => c.name === HANDOFF_TOOL.name) : undefined;
      if (wantsPerson) {
        recordSearches(input, citeSources(input.transcript, '').searches);
        const reason = handoffReason(wantsPerson.args);
        return reason ? { kind: 'handoff', reason, at } : { kind: 'handoff', at };
      }
      const byName = new Map(catalog.map((f) => [f.name, f]));
      // Worded in the customer's locale; the backend is asked for its own words only when the customer will read them.
      const calls = await Promise.all(
        res.toolCalls.map(async (c) => {
          const confirm = requiresConfirmation(byName.get(c.name)?.mode, c.name, config);
          const summary = await localizedSummary(byName.get(c.name), c.name, c.args, locale, confirm ? { ask } : {});
          return { id: c.id, name: c.name, args: c.args, requiresConfirmation: confirm, summary };
        }),
      );
      return { kind: 'tools', text: res.text ?? undefined, calls, at: calls.some((c) => c.requiresConfirmation) ? services.clock.now() : at };
    } catch (err) {
      stream?.takeBack();
      if (failedAttempts === 0) services.telemetry.turnCall(Object.assign(failedCall(llm, services.clock.now() - started, err), base));
      throw err;
    }
  };
  /** The conversation was passivated: drop its window (it is read again from the store when it returns). */
  const forget = (conversationId: string) => {
    windows.delete(conversationId);
    locales.delete(conversationId);
  };
  return Object.assign(step, { forget });
}
