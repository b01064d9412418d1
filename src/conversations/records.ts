// Pure: what a conversation's durable outputs become — the stored record and its history records (one write of the
// write loop), and the telemetry events published once they are durable. No store, no clock, no I/O: unit-tested in
// test/unit/conversation.records.test.ts.
import type { NewEvent } from '../services.ts';
import type { ConversationMeta, ConversationRecord, MessageRecord } from '../store/model.ts';
import type { Pending } from './types.ts';

/** The actor's state value as stored (`state`): a string, or the JSON of a nested value. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The record as this write leaves it: the fields others write kept from `previous`, the rest from the actor. */
export function recordFor(
  meta: ConversationMeta,
  previous: Omit<ConversationRecord, 'snapshot'> | undefined,
  actor: { snapshot: unknown; value: unknown },
  now: number,
): ConversationRecord {
  return Object.assign({}, previous, meta, {
    snapshot: actor.snapshot,
    state: stateName(actor.value),
    busy: actor.value !== 'idle',
    updatedAt: now,
  });
}

/** One write's record and history records: `batch` applied in order to the record `recordFor` gives. */
export function writeOf(
  meta: ConversationMeta,
  previous: Omit<ConversationRecord, 'snapshot'> | undefined,
  actor: { snapshot: unknown; value: unknown },
  now: number,
  batch: Pending[],
): { record: ConversationRecord; messages: MessageRecord[] } {
  const record = recordFor(meta, previous, actor, now);
  const messages: MessageRecord[] = [];
  for (const entry of batch) recordOutput(record, messages, entry);
  return { record, messages };
}

/** What one durable output changes in the record, and the history record it is stored as (none for some). */
export function recordOutput(record: ConversationRecord, messages: MessageRecord[], { o, at }: Pending): void {
  const conversationId = record.conversationId;
  switch (o.type) {
    case 'customer':
      messages.push({
        id: o.messageId,
        conversationId,
        role: 'user',
        text: o.text,
        at,
        turnId: `${conversationId}:${o.messageId}`,
        ...(o.content ? { data: { content: o.content } } : {}),
      });
      record.lastMessageAt = at;
      record.lastCustomerMessageAt = at;
      record.reviewedAt = undefined;
      return;
    case 'reply':
      messages.push({
        id: o.id,
        conversationId,
        role: 'assistant',
        text: o.text,
        at,
        turnId: o.turnId,
        ...(o.answers || o.sources || o.unanswered ? { data: replyData(o) } : {}),
      });
      record.lastMessageAt = at;
      return;
    case 'tool':
      messages.push(toolRecord(conversationId, o, at));
      if (o.phase !== 'invoked' && o.confirmationId && o.receipt) messages.push(receiptRecord(conversationId, o, at));
      return;
    case 'confirm':
      record.pendingConfirmation = { id: o.id, name: o.name, args: o.args, summary: o.summary };
      messages.push({ id: o.id, conversationId, role: 'confirmation', text: o.summary, at, turnId: o.turnId, data: { name: o.name, outcome: 'requested' } });
      return;
    case 'confirmation':
      record.pendingConfirmation = undefined;
      messages.push({
        id: `${o.id}:${o.outcome}`,
        conversationId,
        role: 'confirmation',
        text: o.outcome,
        at,
        data: o.reason ? { name: o.name, outcome: o.outcome, reason: o.reason } : { name: o.name, outcome: o.outcome },
      });
      return;
    case 'agent':
      messages.push({ id: o.id, conversationId, role: 'agent', text: o.text, at, data: { author: o.author } });
      record.lastMessageAt = at;
      if (record.handoff) record.handoff = Object.assign({}, record.handoff, { agent: o.author });
      return;
    case 'handoff':
      messages.push(handoffRecord(record, o, at));
      return;
    case 'resolved':
      // Resolved while no person had it: a handoff record of its own (with a person, the release carries it).
      messages.push({ id: o.id, conversationId, role: 'handoff', text: 'resolved', at, data: { phase: 'resolved', resolved: true, resolvedBy: o.by } });
      return;
    default:
      return;
  }
}

type Output<T extends Pending['o']['type']> = Extract<Pending['o'], { type: T }>;

/** A reply's record data: the messages it answered (a burst), the sources it cites, whether it could not answer. */
function replyData(o: Output<'reply'>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  if (o.answers) data.answers = o.answers;
  if (o.sources) data.sources = o.sources;
  if (o.unanswered) data.unanswered = true;
  return data;
}

function toolRecord(conversationId: string, o: Output<'tool'>, at: number): MessageRecord {
  if (o.phase === 'invoked') {
    return { id: `${o.callId}:invoked`, conversationId, role: 'tool', text: '', at, turnId: o.turnId, data: { phase: 'invoked', name: o.name, args: o.args } };
  }
  const data: Record<string, unknown> = { phase: o.phase, name: o.name, ok: o.phase === 'result', content: o.content, durationMs: o.durationMs };
  if (o.error !== undefined) data.error = o.error;
  if (o.confirmationId !== undefined) data.confirmationId = o.confirmationId;
  if (o.receipt !== undefined) data.receipt = o.receipt;
  return { id: `${o.callId}:${o.phase}`, conversationId, role: 'tool', text: o.error ?? '', at, turnId: o.turnId, data };
}

/**
 * What became of a confirmed action, where the customer approved it: `<confirmation id>:receipt`, a confirmation record
 * with `outcome` `done` or `failed` and the receipt as its text (the widget's history shows it after a reload).
 */
function receiptRecord(conversationId: string, o: Output<'tool'>, at: number): MessageRecord {
  const done = o.phase === 'result';
  const id = `${(o as { confirmationId: string }).confirmationId}:receipt`;
  const text = (o as { receipt: string }).receipt;
  return { id, conversationId, role: 'confirmation', text, at, turnId: o.turnId, data: { name: o.name, outcome: done ? 'done' : 'failed' } };
}

function handoffRecord(record: ConversationRecord, o: Output<'handoff'>, at: number): MessageRecord {
  const data: Record<string, unknown> = { phase: o.phase };
  if (o.phase === 'requested') {
    record.handoff = { since: at, source: o.source };
    if (o.reason !== undefined) record.handoff.reason = data.reason = o.reason;
    if (o.agentId !== undefined) record.handoff.requestedBy = data.agentId = o.agentId;
    data.source = o.source;
  } else if (o.phase === 'released') {
    record.handoff = undefined;
    data.by = o.by;
    if (o.resolvedBy) Object.assign(data, { resolved: true, resolvedBy: o.resolvedBy });
  } else if (o.phase === 'offline') {
    if (record.handoff) record.handoff = Object.assign({}, record.handoff, { offlineAt: at });
  } else {
    data.agent = o.agent;
    if (o.waitedMs !== undefined) data.waitedMs = o.waitedMs;
  }
  return { id: o.id, conversationId: record.conversationId, role: 'handoff', text: o.phase, at, data };
}

/**
 * The telemetry event of a durable output (none for some). Message text is in it only with `storeText`
 * (`telemetry.store_text`, default off): see README, "Telemetry".
 */
export function telemetryOf(meta: ConversationMeta, { o, at }: Pending, storeText: boolean): NewEvent | undefined {
  const base = { at, conversationId: meta.conversationId, customerId: meta.customerId, customerExternalId: meta.externalId, channel: meta.channel };
  const withText = (data: Record<string, unknown>, text: string, key = 'text') => {
    if (storeText) data[key] = text;
    return data;
  };
  switch (o.type) {
    case 'customer': {
      const data = { messageId: o.messageId, turnId: `${meta.conversationId}:${o.messageId}`, length: o.text.length };
      return { type: 'message.in', data: withText(data, o.text), ...base };
    }
    case 'reply':
      return { type: 'message.out', data: withText({ id: o.id, turnId: o.turnId, length: o.text.length }, o.text), ...base };
    case 'turn':
      return { type: `turn.${o.phase}`, data: { turnId: o.turnId, messageId: o.messageId }, ...base };
    case 'tool': {
      const data =
        o.phase === 'invoked'
          ? { turnId: o.turnId, callId: o.callId, name: o.name }
          : { turnId: o.turnId, callId: o.callId, name: o.name, durationMs: o.durationMs, error: o.error };
      return { type: `tool.${o.phase}`, data, ...base };
    }
    case 'confirm':
      return { type: 'confirmation.requested', data: withText({ id: o.id, turnId: o.turnId, name: o.name }, o.summary, 'summary'), ...base };
    case 'confirmation':
      return { type: `confirmation.${o.outcome}`, data: { id: o.id, turnId: o.turnId, name: o.name }, ...base };
    case 'agent':
      return { type: 'message.agent', data: withText({ id: o.id, author: o.author, length: o.text.length }, o.text), ...base };
    case 'handoff':
      return { type: `handoff.${o.phase}`, data: handoffData(o), ...base };
    default:
      return undefined;
  }
}

/** `agentId` (who acted), `waitedMs` (first agent reply) and `durationMs` (to resolution) feed /metrics. */
function handoffData(o: Output<'handoff'>): Record<string, unknown> {
  const defined = (d: Record<string, unknown>) => Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined));
  if (o.phase === 'released')
    return defined({ by: o.by, agentId: o.agentId, lastAgentId: o.lastAgentId, durationMs: o.durationMs, resolved: o.resolvedBy ? true : undefined });
  if (o.phase === 'joined') return defined({ agent: o.agent, agentId: o.agent.agentId, waitedMs: o.waitedMs });
  if (o.phase === 'offline') return {};
  return defined({ source: o.source, reason: o.reason, turnId: o.turnId, agentId: o.agentId });
}
