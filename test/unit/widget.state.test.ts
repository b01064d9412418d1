import { describe, expect, it } from 'vitest';
import { backoffDelay, initialState, reduce, unacknowledged } from '../../widget/src/state.ts';

describe('widget state', () => {
  it('renders history on ready, keeps unsent messages, marks acks', () => {
    let s = reduce(initialState, { type: 'sent', id: 'local-1', text: 'hi', at: 1 });
    expect(unacknowledged(s).map((b) => b.id)).toEqual(['local-1']);
    s = reduce(s, {
      type: 'frame',
      frame: { type: 'ready', customerId: 'c', conversationId: 'x', history: [{ id: 'h1', role: 'assistant', text: 'earlier', at: 0 }] },
    });
    expect(s.status).toBe('Connected');
    expect(s.bubbles.map((b) => b.id)).toEqual(['h1', 'local-1']);
    s = reduce(s, { type: 'frame', frame: { type: 'ack', id: 'local-1' } });
    expect(unacknowledged(s)).toEqual([]);
    // a reconnect's history that already contains the message does not duplicate it
    s = reduce(s, {
      type: 'frame',
      frame: {
        type: 'ready',
        customerId: 'c',
        conversationId: 'x',
        history: [
          { id: 'h1', role: 'assistant', text: 'earlier', at: 0 },
          { id: 'local-1', role: 'user', text: 'hi', at: 1 },
        ],
      },
    });
    expect(s.bubbles.map((b) => b.id)).toEqual(['h1', 'local-1']);
  });

  it('assistant messages once each, typing, confirmations, errors', () => {
    let s = reduce(initialState, { type: 'frame', frame: { type: 'message', id: 'r1', role: 'assistant', text: '<b>x</b>', at: 2, proactive: true } });
    s = reduce(s, { type: 'frame', frame: { type: 'message', id: 'r1', role: 'assistant', text: '<b>x</b>', at: 2 } });
    expect(s.bubbles).toEqual([{ id: 'r1', role: 'assistant', text: '<b>x</b>', at: 2, proactive: true }]);
    s = reduce(s, { type: 'frame', frame: { type: 'typing', on: true } });
    expect(s.typing).toBe(true);
    s = reduce(s, { type: 'frame', frame: { type: 'confirm', id: 'c1', name: 'cancelOrder', args: {}, summary: 'Cancel order 1001' }, at: 5 });
    expect(s.confirm).toEqual({ id: 'c1', name: 'cancelOrder', summary: 'Cancel order 1001' });
    // the card is part of the transcript, after the messages it follows
    expect(s.bubbles.at(-1)).toEqual({ id: 'c1', role: 'confirmation', text: 'Cancel order 1001', at: 5 });
    s = reduce(s, { type: 'answered', id: 'c1', approve: false });
    expect(s.confirm).toBeUndefined();
    expect(s.bubbles.at(-1)).toMatchObject({ id: 'c1', role: 'confirmation', outcome: 'denied' });
    s = reduce(s, { type: 'frame', frame: { type: 'error', code: 'rate_limited', message: 'Too many' } });
    expect(s.error).toEqual({ code: 'rate_limited' });
    s = reduce(s, { type: 'status', status: 'Connected' });
    expect(s.error).toBeUndefined();
  });

  it('a confirmation stays in the transcript as a receipt: answered here, resolved by the server, or from history', () => {
    let s = reduce(initialState, { type: 'frame', frame: { type: 'confirm', id: 'k1', name: 'cancelOrder', args: {}, summary: 'Cancel order 1001' }, at: 7 });
    s = reduce(s, { type: 'frame', frame: { type: 'confirmation', id: 'k1', outcome: 'expired', at: 9 } });
    expect(s.bubbles).toEqual([{ id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 7, outcome: 'expired' }]);
    expect(s.confirm).toBeUndefined();
    // a reconnect's history carries the receipt; an unanswered card is dropped (the server sends it again)
    s = reduce(s, { type: 'frame', frame: { type: 'confirm', id: 'k2', name: 'cancelOrder', args: {}, summary: 'Cancel order 1002' }, at: 8 });
    s = reduce(s, {
      type: 'frame',
      frame: {
        type: 'ready',
        customerId: 'c',
        conversationId: 'x',
        history: [
          { id: 'u1', role: 'user', text: 'Cancel order 1001', at: 6 },
          { id: 'k1', role: 'confirmation', text: 'Cancel order 1001', at: 7, outcome: 'approved' },
        ],
      },
    });
    expect(s.bubbles.map((b) => [b.id, b.outcome])).toEqual([
      ['u1', undefined],
      ['k1', 'approved'],
    ]);
    expect(s.confirm).toBeUndefined();
  });

  it('unauthorized and forbidden_origin are reasons for being disconnected, not errors to show', () => {
    let s = reduce(initialState, { type: 'frame', frame: { type: 'error', code: 'unauthorized', message: 'Session token refused (expired)' } });
    expect(s.error).toBeUndefined();
    s = reduce(s, { type: 'status', status: 'Disconnected' });
    expect(s).toMatchObject({ status: 'Disconnected', reason: 'auth' });
    s = reduce(initialState, { type: 'frame', frame: { type: 'error', code: 'forbidden_origin', message: 'no' } });
    expect(reduce(s, { type: 'status', status: 'Disconnected' }).reason).toBe('origin');
    expect(reduce(s, { type: 'status', status: 'Connected' }).reason).toBeUndefined();
  });

  it('reconnect backoff: 0.5 s doubling to 30 s, with jitter', () => {
    expect(backoffDelay(0, () => 0)).toBe(250);
    expect(backoffDelay(0, () => 1)).toBe(500);
    expect(backoffDelay(3, () => 1)).toBe(4000);
    expect(backoffDelay(10, () => 1)).toBe(30_000);
    expect(backoffDelay(10, () => 0)).toBe(15_000);
  });

  it('waiting for a person: the notice, the email form sent, refused, saved; an agent joining ends the notice', () => {
    let s = reduce(initialState, { type: 'frame', frame: { type: 'status', mode: 'human', at: 1 } });
    s = reduce(s, {
      type: 'frame',
      frame: { type: 'handoff_notice', kind: 'closed', timeZone: 'Europe/Berlin', backAt: 100, askEmail: true, at: 2 },
    });
    expect(s.handoff).toMatchObject({ kind: 'closed', backAt: 100, askEmail: true });
    // The "will join shortly" line no longer promises it.
    expect(s.bubbles.find((b) => b.role === 'status')?.away).toBe(true);
    s = reduce(s, { type: 'contact', id: 'c1', email: 'nope' });
    expect(s.contact).toEqual({ pending: 'c1', error: undefined });
    s = reduce(s, { type: 'frame', frame: { type: 'error', code: 'invalid_email', message: 'x', id: 'c1' } });
    expect(s.contact).toEqual({ pending: undefined, error: 'invalid_email' });
    expect(s.error).toBeUndefined();
    s = reduce(s, { type: 'contact', id: 'c2', email: 'ada@example.com' });
    s = reduce(s, { type: 'frame', frame: { type: 'contact_saved', id: 'c2', email: 'ada@example.com' } });
    expect(s.contact).toEqual({ email: 'ada@example.com' });
    s = reduce(s, { type: 'frame', frame: { type: 'status', mode: 'human', agent: { name: 'Alex' }, at: 3 } });
    expect(s.handoff).toBeUndefined();
  });

  it('ready places the history’s handoff lines after the entries they followed; the live line of the same id is not shown twice', () => {
    let s = reduce(initialState, {
      type: 'frame',
      frame: {
        type: 'ready',
        customerId: 'c',
        conversationId: 'x',
        history: [
          { id: 'u1', role: 'user', text: 'A person please', at: 1 },
          { id: 'g1', role: 'agent', text: 'Hi, Ada here', at: 4, author: { name: 'Ada' } },
        ],
        handoffs: [
          { id: 'h:1', mode: 'human', at: 1, after: 'u1', away: true },
          { id: 'j:g1', mode: 'human', agent: { name: 'Ada' }, at: 4, after: 'u1' },
          { id: 'r:1', mode: 'assistant', at: 6, after: 'g1' },
          { id: 'h:0', mode: 'human', at: 0, after: 'gone' },
        ],
      },
    });
    expect(s.bubbles.map((b) => [b.id, b.role, b.mode, b.author?.name, b.away, b.past])).toEqual([
      ['status:h:0', 'status', 'human', undefined, undefined, true],
      ['u1', 'user', undefined, undefined, undefined, undefined],
      ['status:h:1', 'status', 'human', undefined, true, true],
      ['status:j:g1', 'status', 'human', 'Ada', undefined, true],
      ['g1', 'agent', undefined, 'Ada', undefined, undefined],
      ['status:r:1', 'status', 'assistant', undefined, undefined, true],
    ]);
    s = reduce(s, { type: 'frame', frame: { type: 'status', mode: 'assistant', at: 6, id: 'r:1' } });
    expect(s.bubbles.filter((b) => b.role === 'status')).toHaveLength(4);
  });

  it('an approved card gets its result from a receipt frame (issue 33): a refused action is marked failed, not approved-only', () => {
    let s = reduce(initialState, { type: 'frame', frame: { type: 'ready', customerId: 'c', conversationId: 'x', history: [] } });
    s = reduce(s, { type: 'frame', frame: { type: 'confirm', id: 'k1', name: 'cancelOrder', args: {}, summary: 'Cancelar el pedido 1002' }, at: 5 });
    s = reduce(s, { type: 'answered', id: 'k1', approve: true });
    expect(s.bubbles[0]).toMatchObject({ outcome: 'approved' });
    expect(s.bubbles[0].receipt).toBeUndefined();
    s = reduce(s, { type: 'frame', frame: { type: 'receipt', id: 'k1', ok: false, text: 'No se pudo cancelar el pedido 1002', at: 9 } });
    expect(s.bubbles[0]).toMatchObject({ outcome: 'approved', receipt: { ok: false, text: 'No se pudo cancelar el pedido 1002' } });
    // a receipt for no card changes nothing; the ready history brings it back after a reload
    expect(reduce(s, { type: 'frame', frame: { type: 'receipt', id: 'nope', ok: true, text: 'x', at: 1 } })).toBe(s);
    s = reduce(s, {
      type: 'frame',
      frame: {
        type: 'ready',
        customerId: 'c',
        conversationId: 'x',
        history: [{ id: 'k1', role: 'confirmation', text: 'Cancelar el pedido 1002', at: 5, outcome: 'approved', receipt: { ok: false, text: 'No se pudo' } }],
      },
    });
    expect(s.bubbles[0].receipt).toEqual({ ok: false, text: 'No se pudo' });
  });
});
