// What a conversation's durable outputs become (src/conversations/records.ts, pure): the stored record and its history
// records, and the telemetry events published once they are durable.
import { describe, expect, it } from 'vitest';
import { recordFor, stateName, telemetryOf, writeOf } from '../../src/conversations/records.ts';
import type { Pending } from '../../src/conversations/types.ts';
import type { ConversationMeta } from '../../src/store/model.ts';

const meta: ConversationMeta = { conversationId: 'conv_web_c1', customerId: 'c1', externalId: 'ext-1', channel: 'web' };
const actor = { snapshot: { value: 'thinking' }, value: 'thinking' };
const at = (n: number, o: Pending['o']): Pending => ({ o, at: n });

describe('records: a write of durable outputs', () => {
  it('the record keeps the fields others write, takes the actor state, and each output changes what it changes', () => {
    const previous = { ...meta, state: 'idle', busy: false, updatedAt: 1, reviewedAt: 5, reflection: { verdict: 'resolved' as const, summary: 's', at: 5 } };
    const { record, messages } = writeOf(meta, previous, actor, 100, [
      at(10, { type: 'customer', messageId: 'm1', text: 'where is my order?', content: { kind: 'text' } }),
      at(11, { type: 'tool', turnId: 't1', callId: 'k1', name: 'getOrder', phase: 'invoked', args: { id: 1 } }),
      at(12, { type: 'tool', turnId: 't1', callId: 'k1', name: 'getOrder', phase: 'failed', content: 'Error: x', durationMs: 4, error: 'x' }),
      at(13, { type: 'confirm', id: 'cf1', turnId: 't1', name: 'refund', args: { a: 1 }, summary: 'Refund 1' }),
      at(14, { type: 'reply', id: 't1:r', turnId: 't1', text: 'On its way', replyTo: 'm1' }),
    ]);
    expect(record).toEqual({
      ...previous,
      snapshot: { value: 'thinking' },
      state: 'thinking',
      busy: true,
      updatedAt: 100,
      lastMessageAt: 14,
      lastCustomerMessageAt: 10,
      reviewedAt: undefined,
      pendingConfirmation: { id: 'cf1', name: 'refund', args: { a: 1 }, summary: 'Refund 1' },
    });
    expect(messages).toEqual([
      {
        id: 'm1',
        conversationId: meta.conversationId,
        role: 'user',
        text: 'where is my order?',
        at: 10,
        turnId: `${meta.conversationId}:m1`,
        data: { content: { kind: 'text' } },
      },
      {
        id: 'k1:invoked',
        conversationId: meta.conversationId,
        role: 'tool',
        text: '',
        at: 11,
        turnId: 't1',
        data: { phase: 'invoked', name: 'getOrder', args: { id: 1 } },
      },
      {
        id: 'k1:failed',
        conversationId: meta.conversationId,
        role: 'tool',
        text: 'x',
        at: 12,
        turnId: 't1',
        data: { phase: 'failed', name: 'getOrder', ok: false, content: 'Error: x', durationMs: 4, error: 'x' },
      },
      {
        id: 'cf1',
        conversationId: meta.conversationId,
        role: 'confirmation',
        text: 'Refund 1',
        at: 13,
        turnId: 't1',
        data: { name: 'refund', outcome: 'requested' },
      },
      { id: 't1:r', conversationId: meta.conversationId, role: 'assistant', text: 'On its way', at: 14, turnId: 't1' },
    ]);
  });

  it('handoff: requested sets it, an agent message names the agent, released clears it; a settled confirmation clears the pending one', () => {
    const { record, messages } = writeOf(
      meta,
      { ...meta, state: 'idle', busy: false, updatedAt: 1, pendingConfirmation: { id: 'cf1', name: 'n', args: 1, summary: 's' } },
      { snapshot: 1, value: 'withHuman' },
      50,
      [
        at(20, { type: 'confirmation', id: 'cf1', turnId: 't1', name: 'n', outcome: 'expired' }),
        at(21, { type: 'handoff', id: 'h:21', phase: 'requested', source: 'api', reason: 'angry' }),
      ],
    );
    expect(record.pendingConfirmation).toBeUndefined();
    expect(record.handoff).toEqual({ since: 21, source: 'api', reason: 'angry' });
    expect(messages.map((m) => [m.id, m.role, m.text, m.data])).toEqual([
      ['cf1:expired', 'confirmation', 'expired', { name: 'n', outcome: 'expired' }],
      ['h:21', 'handoff', 'requested', { phase: 'requested', reason: 'angry', source: 'api' }],
    ]);
    const next = writeOf(meta, record, { snapshot: 2, value: 'idle' }, 60, [
      at(30, { type: 'agent', id: 'a1', text: 'Hello, Alex here', author: { name: 'Alex' } }),
      at(31, { type: 'handoff', id: 'r:21', phase: 'released', by: 'agent' }),
    ]);
    expect(next.messages.map((m) => m.role)).toEqual(['agent', 'handoff']);
    expect(next.record.handoff).toBeUndefined();
    expect(next.record.lastMessageAt).toBe(30);
    expect(next.record.busy).toBe(false);
    const joined = writeOf(meta, record, { snapshot: 2, value: 'withHuman' }, 60, [at(30, { type: 'agent', id: 'a1', text: 'hi', author: { name: 'Alex' } })]);
    expect(joined.record.handoff).toEqual({ since: 21, source: 'api', reason: 'angry', agent: { name: 'Alex' } });
  });

  it("a confirmed call's outcome keeps its receipt, and the receipt is also stored where the customer approved (issue 33)", () => {
    const { messages } = writeOf(meta, undefined, actor, 100, [
      at(20, {
        type: 'tool',
        turnId: 't1',
        callId: 'k2',
        name: 'cancelOrder',
        phase: 'failed',
        content: 'Error (not_cancellable): shipped',
        error: 'shipped',
        confirmationId: 't1:1:k2',
        receipt: 'Could not cancel order 1002: shipped',
      }),
      at(21, { type: 'tool', turnId: 't1', callId: 'k3', name: 'getOrder', phase: 'result', content: '{}' }),
    ]);
    expect(messages.map((m) => [m.id, m.role, m.text, m.data?.outcome ?? m.data?.receipt ?? null])).toEqual([
      ['k2:failed', 'tool', 'shipped', 'Could not cancel order 1002: shipped'],
      ['t1:1:k2:receipt', 'confirmation', 'Could not cancel order 1002: shipped', 'failed'],
      ['k3:result', 'tool', '', null],
    ]);
    expect(messages[1].data).toEqual({ name: 'cancelOrder', outcome: 'failed' });
  });

  it('live-only outputs store nothing; a nested state is stored as its JSON', () => {
    const { messages } = writeOf(meta, undefined, actor, 1, [
      at(1, { type: 'typing', on: true }),
      at(2, { type: 'turn', turnId: 't', phase: 'started', messageId: 'm' }),
    ]);
    expect(messages).toEqual([]);
    expect(stateName({ a: 'b' })).toBe('{"a":"b"}');
    expect(recordFor(meta, undefined, { snapshot: 0, value: 'idle' }, 9)).toEqual({ ...meta, snapshot: 0, state: 'idle', busy: false, updatedAt: 9 });
  });
});

describe('records: telemetry of durable outputs', () => {
  const base = { conversationId: meta.conversationId, customerId: 'c1', customerExternalId: 'ext-1', channel: 'web' };

  it('message text only with store_text', () => {
    const input = at(10, { type: 'customer', messageId: 'm1', text: 'hello' });
    expect(telemetryOf(meta, input, false)).toEqual({
      type: 'message.in',
      at: 10,
      data: { messageId: 'm1', turnId: `${meta.conversationId}:m1`, length: 5 },
      ...base,
    });
    expect(telemetryOf(meta, input, true)?.data).toMatchObject({ text: 'hello' });
    const confirm = at(11, { type: 'confirm', id: 'cf', turnId: 't', name: 'refund', args: {}, summary: 'Refund 5' });
    expect(telemetryOf(meta, confirm, false)?.data).toEqual({ id: 'cf', turnId: 't', name: 'refund' });
    expect(telemetryOf(meta, confirm, true)?.data).toEqual({ id: 'cf', turnId: 't', name: 'refund', summary: 'Refund 5' });
  });

  it('each output its event type; live-only and forwarded ones none', () => {
    const types = (
      [
        { type: 'reply', id: 'r', turnId: 't', text: 'x', replyTo: 'm' },
        { type: 'turn', turnId: 't', phase: 'ended', messageId: 'm' },
        { type: 'tool', turnId: 't', callId: 'k', name: 'n', phase: 'invoked', args: {} },
        { type: 'tool', turnId: 't', callId: 'k', name: 'n', phase: 'result', content: 'c', durationMs: 3 },
        { type: 'confirmation', id: 'c', turnId: 't', name: 'n', outcome: 'denied' },
        { type: 'agent', id: 'a', text: 'hi', author: { name: 'Alex' } },
        { type: 'handoff', id: 'h', phase: 'requested', source: 'model', turnId: 't' },
        { type: 'handoff', id: 'j', phase: 'joined', agent: { name: 'Alex' } },
        { type: 'handoff', id: 'r', phase: 'released', by: 'idle' },
        { type: 'typing', on: true },
        { type: 'forward', messageId: 'm', text: 'x' },
      ] as const
    ).map((o) => telemetryOf(meta, at(1, o), false));
    expect(types.map((e) => e?.type)).toEqual([
      'message.out',
      'turn.ended',
      'tool.invoked',
      'tool.result',
      'confirmation.denied',
      'message.agent',
      'handoff.requested',
      'handoff.joined',
      'handoff.released',
      undefined,
      undefined,
    ]);
    expect(types[3]?.data).toEqual({ turnId: 't', callId: 'k', name: 'n', durationMs: 3, error: undefined });
    expect(types[6]?.data).toEqual({ source: 'model', turnId: 't' });
    expect(types[7]?.data).toEqual({ agent: { name: 'Alex' } });
    expect(types[8]?.data).toEqual({ by: 'idle' });
  });
});
