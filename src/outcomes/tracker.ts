// Keeps every conversation's outcome (definitions.ts) in the store: folded in with the conversation's durable outputs
// in the very transaction that writes them (the host's recorder: a write and the outcome it changes commit together or
// not at all, with no commit of their own; a write with no outcome facts, a tool call's, stays the store's fast path),
// answered by the customer ("Did that answer your question?", a rating), changed by an agent (the handoff reason),
// and settled by a sweep once an episode has been quiet for `assume_after_hours`. Before settling, the sweep folds in
// whatever the history holds after the record's last fact (a record older than the fold in the write), so an episode
// is never decided on less than what was stored. The deadlines are stored (`decideAt`): a restart loses none; the
// sweep re-arms one timer on the injected clock for the earliest. Each change is a telemetry event (metrics, the
// dashboard), after the commit, and a webhook event prepared in the same transaction as the record.
import type { Clock, TimerHandle } from '../clock.ts';
import type { OutputRecorder, Pending } from '../conversations/host.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import type { ConversationMeta, MessageRecord } from '../store/model.ts';
import type { ConversationOutcome, HandoffReason, Rating } from '../store/outcomes.ts';
import type { StoreRepos } from '../store/repos.ts';
import type { NewWebhookEvent } from '../webhooks/events.ts';
import { applyFact, decide, type OutcomeChange, type OutcomeFact, type OutcomeSettings } from './definitions.ts';
import { outcomeTelemetry, outcomeWebhook } from './events.ts';

const SWEEP_BATCH = 100;
/** Looks at the store again at least this often (another node's records, a deadline this node did not write). */
const RECHECK_MS = 60_000;

export interface OutcomeTracker {
  /**
   * The conversation host's recorder: folds a write's outputs into the outcome inside that write's transaction (which
   * holds the conversation), so the record is current as soon as the write commits.
   */
  recorder: OutputRecorder;
  /** The customer's answer to "Did that answer your question?"; false when the conversation has no outcome record. */
  answer(conversationId: string, yes: boolean): Promise<boolean>;
  /** The customer's rating (CSAT); false when the conversation has no outcome record. */
  rate(conversationId: string, rating: { score: number; comment?: string; id?: string }): Promise<boolean>;
  /** The model's estimate of the experience (labelled estimated). */
  estimate(conversationId: string, rating: { score: number; comment: string }): Promise<boolean>;
  /** An agent changes a handed-over conversation's reason category; undefined when it is not handed over. */
  setReason(conversationId: string, reason: HandoffReason): Promise<ConversationOutcome | undefined>;
  /** Settles every episode due now (tests, and the timer). */
  sweep(): Promise<number>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const replyFact = (at: number, text: string, unanswered: boolean): OutcomeFact =>
  unanswered ? { kind: 'reply', at, text, unanswered: true } : { kind: 'reply', at, text };

/** The facts an output tells the outcome (none for most). */
export function factOf({ o, at }: Pending): OutcomeFact | undefined {
  switch (o.type) {
    case 'customer':
      return { kind: 'customer', at, text: o.text };
    case 'reply':
      return replyFact(at, o.text, o.unanswered === true);
    case 'agent':
      return { kind: 'agent', at };
    case 'confirm':
      return { kind: 'confirm', at };
    case 'confirmation':
      return { kind: 'confirmation', at, outcome: o.outcome };
    case 'handoff':
      if (o.phase === 'requested') return { kind: 'handoff', at, source: o.source, reason: o.reason };
      if (o.phase === 'released') return { kind: 'released', at };
      return undefined;
    default:
      return undefined;
  }
}

/** A stored history record as a fact (the sweep's catch-up). */
export function historyFact(m: MessageRecord): OutcomeFact | undefined {
  if (m.role === 'user') return { kind: 'customer', at: m.at, text: m.text };
  if (m.role === 'assistant') return replyFact(m.at, m.text, m.data?.unanswered === true);
  if (m.role === 'agent') return { kind: 'agent', at: m.at };
  if (m.role !== 'handoff') return undefined;
  if (m.data?.phase === 'released') return { kind: 'released', at: m.at };
  if (m.data?.phase !== 'requested') return undefined;
  const reason = typeof m.data.reason === 'string' ? m.data.reason : undefined;
  return { kind: 'handoff', at: m.at, source: m.data.source === 'api' ? 'api' : 'model', reason };
}

export function createOutcomeTracker(o: {
  services: Services;
  /** Prepares webhook events in a transaction (absent: no endpoints configured). */
  webhooks?: (tx: StoreRepos, events: NewWebhookEvent[]) => Promise<() => void>;
  /** After an outcome is decided (the CSAT prompt, the model's estimate). */
  onDecided?: (record: ConversationOutcome) => void;
}): OutcomeTracker {
  const { services } = o;
  const { store, config, telemetry } = services;
  const clock: Clock = services.clock;
  const log: Logger = services.logger.child({ component: 'outcomes' });
  const settings: OutcomeSettings = {
    assumeAfterMs: config.outcomes.assume_after_hours * 3_600_000,
    reopenMs: config.outcomes.reopen_days * 86_400_000,
  };
  let timer: TimerHandle | undefined;
  let armedAt = Infinity;
  let stopped = true;
  let sweeping: Promise<number> | undefined;

  /** Writes the record and the webhook events of its changes; returns what to do once committed. */
  const write = async (tx: StoreRepos, record: ConversationOutcome, changes: OutcomeChange[]) => {
    await tx.outcomes.put(record);
    const after = o.webhooks && changes.length ? await o.webhooks(tx, changes.map(outcomeWebhook)) : undefined;
    return () => {
      after?.();
      for (const c of changes) telemetry.event(outcomeTelemetry(c));
      for (const c of changes) if (c.outcome !== 'reopened') o.onDecided?.(c.record);
      if (record.decideAt !== undefined && record.decideAt < armedAt) arm(record.decideAt);
    };
  };

  type Next = { record: ConversationOutcome; changes: OutcomeChange[] } | undefined;
  /** The record after `facts` (in order); undefined when there is none and they start none. */
  const folded = (current: ConversationOutcome | undefined, meta: ConversationMeta, facts: OutcomeFact[]): Next => {
    let record = current;
    const changes: OutcomeChange[] = [];
    for (const fact of facts) {
      const next = applyFact(record, meta, fact, settings);
      record = next.record;
      changes.push(...next.changes);
    }
    return record && { record, changes };
  };
  const recorder: OutputRecorder = {
    wants: (_meta, written) => written.some((e) => factOf(e) !== undefined),
    // The write's transaction holds the conversation (its writer's lock): nothing else changes the record meanwhile.
    record: async (tx, meta, written) => {
      const facts = written.map(factOf).filter((f) => f !== undefined);
      const next = folded(await tx.outcomes.get(meta.conversationId), meta, facts);
      return next ? write(tx, next.record, next.changes) : () => undefined;
    },
  };

  /** Writes what `fn` makes of the conversation's record (none yet: undefined), in a transaction that holds the conversation. */
  const transact = async (conversationId: string, fn: (r: ConversationOutcome | undefined) => Next) => {
    const done = await store.transaction(async (tx) => {
      await tx.conversations.lock(conversationId);
      const next = fn(await tx.outcomes.get(conversationId));
      return next ? { record: next.record, after: await write(tx, next.record, next.changes) } : undefined;
    });
    done?.after();
    return done?.record;
  };
  /**
   * `transact` for a conversation that has a record (none: nothing written, resolves undefined). An answer never
   * overtakes the reply it answers: the reply's write folded it in before the customer could see it.
   */
  const change = (conversationId: string, fn: (r: ConversationOutcome) => Next) => transact(conversationId, (r) => (r ? fn(r) : undefined));

  const rated = (r: { score: number; comment?: string; id?: string }): Rating => {
    const out: Rating = { score: r.score, at: clock.now() };
    if (r.id !== undefined) out.id = r.id;
    if (r.comment?.trim()) out.comment = r.comment.trim();
    return out;
  };

  /** Stores a rating (the customer's, or the model's estimate) and records it as `conversation.rating`. */
  const scored = async (id: string, kind: 'csat' | 'experience', rating: Rating) => {
    let again = false;
    const record = await change(id, (r) => {
      // The same rating given again (a WhatsApp button press whose job ran twice): stored once, counted once.
      again = rating.id !== undefined && r[kind]?.id === rating.id;
      return { record: again ? r : Object.assign({}, r, { [kind]: rating, updatedAt: rating.at }), changes: [] };
    });
    if (!record) return false;
    if (again) return true;
    const data: Record<string, unknown> = { kind, score: rating.score, outcome: record.status };
    if (rating.comment !== undefined && (kind === 'experience' || config.telemetry.store_text)) data.comment = rating.comment;
    telemetry.event({ type: 'conversation.rating', at: rating.at, conversationId: id, customerId: record.customerId, channel: record.channel, data });
    return true;
  };

  function arm(at: number) {
    if (stopped) return;
    clock.clearTimeout(timer);
    armedAt = at;
    timer = clock.setTimeout(
      () => {
        timer = undefined;
        armedAt = Infinity;
        void tracker.sweep().catch((err) => {
          log.warn({ err }, 'outcome sweep failed; trying again');
          arm(clock.now() + 5000);
        });
      },
      Math.max(0, Math.min(at - clock.now(), RECHECK_MS)),
    );
  }

  /** What the history holds after the record's last fact (a write stored before the fold joined it: older data). */
  const missedFacts = async (id: string): Promise<OutcomeFact[]> => {
    const r = await store.outcomes.get(id);
    if (!r) return [];
    const records = await store.history.recent(id, 50, ['user', 'assistant', 'agent', 'handoff']);
    return records
      .filter((m) => m.at > r.lastAt)
      .map(historyFact)
      .filter((f) => f !== undefined);
  };

  const sweepOnce = async () => {
    let settled = 0;
    for (;;) {
      const ids = await store.outcomes.due(clock.now(), SWEEP_BATCH);
      for (const id of ids) {
        const now = clock.now();
        const missed = await missedFacts(id);
        const record = await change(id, (r) => {
          let current = r;
          const changes: OutcomeChange[] = [];
          for (const fact of missed.filter((f) => f.at > current.lastAt)) {
            const next = applyFact(current, current, fact, settings);
            current = next.record!;
            changes.push(...next.changes);
          }
          const c = decide(current, now);
          if (c) changes.push(c);
          return changes.length || current !== r ? { record: c?.record ?? current, changes } : undefined;
        });
        if (record) settled++;
      }
      if (ids.length < SWEEP_BATCH) break;
    }
    const next = await store.outcomes.nextDue();
    arm(next ?? clock.now() + RECHECK_MS);
    return settled;
  };

  const tracker: OutcomeTracker = {
    recorder,
    answer: async (id, yes) =>
      (await change(id, (r) => {
        const next = applyFact(r, r, { kind: 'answer', at: clock.now(), yes }, settings);
        return next.record && { record: next.record, changes: next.changes };
      })) !== undefined,
    rate: (id, rating) => scored(id, 'csat', rated(rating)),
    estimate: (id, rating) => scored(id, 'experience', rated(rating)),
    setReason: (id, reason) =>
      change(id, (r) =>
        r.status === 'handed_over' ? { record: Object.assign({}, r, { reason, reasonBy: 'agent', updatedAt: clock.now() }), changes: [] } : undefined,
      ),
    sweep() {
      // One sweep at a time: a timer firing during a test's own sweep waits for it.
      const run = (sweeping ?? Promise.resolve(0)).catch(() => 0).then(sweepOnce);
      sweeping = run;
      run
        .finally(() => {
          if (sweeping === run) sweeping = undefined;
        })
        .catch(() => undefined);
      return run;
    },
    async start() {
      stopped = false;
      await tracker.sweep();
    },
    async stop() {
      stopped = true;
      clock.clearTimeout(timer);
      timer = undefined;
      await sweeping?.catch(() => undefined);
    },
  };
  return tracker;
}
