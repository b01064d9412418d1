// Issue 20: the text of a reply being written, kept in memory for widgets that connect mid-reply.
import { describe, expect, it } from 'vitest';
import { createWebSessions } from '../../src/web/sessions.ts';

const meta = { conversationId: 'conv_web_c1', customerId: 'c1', channel: 'web' as const };

describe('web sessions: the reply being written', () => {
  it('grows with deltas, starts over on a reset, and is forgotten once the final message is delivered', () => {
    const sessions = createWebSessions(() => 0);
    expect(sessions.writing('c1')).toBeUndefined();
    sessions.stream(meta, { id: 't1:r', text: 'Let me' });
    sessions.stream(meta, { id: 't1:r', text: ' check' });
    expect(sessions.writing('c1')).toEqual({ id: 't1:r', text: 'Let me check' });
    sessions.stream(meta, { id: 't1:r', text: '', reset: true });
    expect(sessions.writing('c1')).toBeUndefined();
    sessions.stream(meta, { id: 't1:r', text: 'It shipped' });
    sessions.deliver(meta, { type: 'reply', id: 't0:r', turnId: 't0', text: 'older', replyTo: 'm0' });
    expect(sessions.writing('c1')).toEqual({ id: 't1:r', text: 'It shipped' });
    sessions.deliver(meta, { type: 'reply', id: 't1:r', turnId: 't1', text: 'It shipped.', replyTo: 'm1' });
    expect(sessions.writing('c1')).toBeUndefined();
  });

  it('a new reply replaces one that was never finished', () => {
    const sessions = createWebSessions(() => 0);
    sessions.stream(meta, { id: 't1:r', text: 'abandoned' });
    sessions.stream(meta, { id: 't2:r', text: 'Fresh' });
    expect(sessions.writing('c1')).toEqual({ id: 't2:r', text: 'Fresh' });
  });
});
