// Issue 21: answered confirmations come back on `ready` as receipts, where they were asked.
import { describe, expect, it } from 'vitest';
import { toWidgetHandoffs, toWidgetHistory } from '../../src/web/history.ts';
import type { MessageRecord } from '../../src/conversations/history.ts';

const rec = (r: Partial<MessageRecord> & Pick<MessageRecord, 'id' | 'role' | 'text' | 'at'>): MessageRecord => ({ conversationId: 'c', ...r });

describe('toWidgetHistory', () => {
  it('messages as they are; each answered confirmation once, at its request, with its summary and outcome', () => {
    const out = toWidgetHistory([
      rec({ id: 'u1', role: 'user', text: 'Cancel order 1001', at: 1 }),
      rec({ id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 2, data: { name: 'cancelOrder', outcome: 'requested' } }),
      rec({ id: 'k1:approved', role: 'confirmation', text: 'approved', at: 5, data: { name: 'cancelOrder', outcome: 'approved' } }),
      rec({ id: 'a1', role: 'assistant', text: 'Order 1001 is cancelled.', at: 6 }),
      rec({ id: 'p1', role: 'assistant', text: 'Shipped', at: 7, proactive: true }),
      rec({ id: 'k2', role: 'confirmation', text: 'Cancel order 1002', at: 8, data: { name: 'cancelOrder', outcome: 'requested' } }),
    ]);
    expect(out).toEqual([
      { id: 'u1', role: 'user', text: 'Cancel order 1001', at: 1 },
      { id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 2, outcome: 'approved' },
      { id: 'a1', role: 'assistant', text: 'Order 1001 is cancelled.', at: 6 },
      { id: 'p1', role: 'assistant', text: 'Shipped', at: 7, proactive: true },
    ]);
  });

  it('an approved action that ran carries its result (issue 33): a failure stays a failure', () => {
    const out = toWidgetHistory([
      rec({ id: 'k1', role: 'confirmation', text: 'Cancelar el pedido 1002', at: 2, data: { name: 'cancelOrder', outcome: 'requested' } }),
      rec({ id: 'k1:approved', role: 'confirmation', text: 'approved', at: 5, data: { name: 'cancelOrder', outcome: 'approved' } }),
      rec({
        id: 'k1:receipt',
        role: 'confirmation',
        text: 'No se pudo cancelar el pedido 1002: ya se envió',
        at: 6,
        data: { name: 'cancelOrder', outcome: 'failed' },
      }),
      rec({ id: 'k2', role: 'confirmation', text: 'Cancelar el pedido 1001', at: 7, data: { name: 'cancelOrder', outcome: 'requested' } }),
      rec({ id: 'k2:approved', role: 'confirmation', text: 'approved', at: 8, data: { name: 'cancelOrder', outcome: 'approved' } }),
      rec({ id: 'k2:receipt', role: 'confirmation', text: 'Pedido 1001 cancelado', at: 9, data: { name: 'cancelOrder', outcome: 'done' } }),
    ]);
    expect(out).toEqual([
      {
        id: 'k1',
        role: 'confirmation',
        text: 'Cancelar el pedido 1002',
        at: 2,
        outcome: 'approved',
        receipt: { ok: false, text: 'No se pudo cancelar el pedido 1002: ya se envió' },
      },
      { id: 'k2', role: 'confirmation', text: 'Cancelar el pedido 1001', at: 7, outcome: 'approved', receipt: { ok: true, text: 'Pedido 1001 cancelado' } },
    ]);
  });

  it('an outcome whose request is older than the records read still shows, named after the function', () => {
    expect(
      toWidgetHistory([rec({ id: 'k9:expired', role: 'confirmation', text: 'expired', at: 3, data: { name: 'cancelOrder', outcome: 'expired' } })]),
    ).toEqual([{ id: 'k9', role: 'confirmation', text: 'cancelOrder', at: 3, outcome: 'expired' }]);
  });

  it('the handoff lines the customer saw live, each after the entry it followed: handed over, a person joined, back to the assistant', () => {
    const records = [
      rec({ id: 'u1', role: 'user', text: 'A person please', at: 1 }),
      rec({ id: 'a1', role: 'assistant', text: 'I am getting a person.', at: 2 }),
      rec({ id: 'h:2', role: 'handoff', text: 'requested', at: 2, data: { phase: 'requested', source: 'model' } }),
      rec({ id: 'o:2', role: 'handoff', text: 'offline', at: 3, data: { phase: 'offline' } }),
      rec({ id: 'j:g1', role: 'handoff', text: 'joined', at: 4, data: { phase: 'joined', agent: { name: 'Ada' } } }),
      rec({ id: 'g1', role: 'agent', text: 'Hi, Ada here', at: 4, data: { author: { name: 'Ada' } } }),
      rec({ id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 5, data: { name: 'cancelOrder', outcome: 'requested' } }),
      rec({ id: 'r:2', role: 'handoff', text: 'released', at: 6, data: { phase: 'released', by: 'agent', resolved: true } }),
      rec({ id: 'k1:approved', role: 'confirmation', text: 'approved', at: 7, data: { name: 'cancelOrder', outcome: 'approved' } }),
      rec({ id: 'x:9', role: 'handoff', text: 'resolved', at: 8, data: { phase: 'resolved', resolved: true } }),
    ];
    const history = toWidgetHistory(records);
    expect(history.map((e) => e.id)).toEqual(['u1', 'a1', 'g1', 'k1']);
    expect(toWidgetHandoffs(records, history)).toEqual([
      { id: 'h:2', mode: 'human', at: 2, after: 'a1', away: true },
      { id: 'j:g1', mode: 'human', agent: { name: 'Ada' }, at: 4, after: 'a1' },
      { id: 'r:2', mode: 'assistant', at: 6, after: 'k1' },
    ]);
  });

  it('a handoff line before every entry read has no `after`; one after a confirmation still waiting follows the entry before it', () => {
    const records = [
      rec({ id: 'h:1', role: 'handoff', text: 'requested', at: 1, data: { phase: 'requested', source: 'api' } }),
      rec({ id: 'u1', role: 'user', text: 'Hello?', at: 2 }),
      rec({ id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 3, data: { name: 'cancelOrder', outcome: 'requested' } }),
      rec({ id: 'r:1', role: 'handoff', text: 'released', at: 4, data: { phase: 'released', by: 'idle' } }),
    ];
    expect(toWidgetHandoffs(records, toWidgetHistory(records))).toEqual([
      { id: 'h:1', mode: 'human', at: 1 },
      { id: 'r:1', mode: 'assistant', at: 4, after: 'u1' },
    ]);
  });
});
