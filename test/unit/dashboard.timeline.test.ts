// The dashboard's conversation timeline says each event in words (dashboard/src/timeline.ts). The events of an
// ordinary conversation — a knowledge search, its outcome, an agent joining, no agent in time, a resolve — used to be
// shown as their raw JSON ("knowledge.search {"turnId":…,"hits":[…]}"). Data shapes as the server records them.
import { describe as group, expect, it } from 'vitest';
import type { EventRecord } from '../../dashboard/src/api.ts';
import { describe } from '../../dashboard/src/timeline.ts';

const event = (type: string, data: Record<string, unknown>): EventRecord => ({ id: `1-${type}`, at: 1, type, conversationId: 'conv_web_c', data });

group('the timeline in words', () => {
  it('says what a knowledge search found and cited; the question only when telemetry keeps text', () => {
    const hits = [
      { chunkId: 'returns#0', articleId: 'returns', score: 31.2, cited: true },
      { chunkId: 'returns#2', articleId: 'returns', score: 22.7, cited: false },
    ];
    expect(describe(event('knowledge.search', { turnId: 't', queryHash: 'e365', queryLength: 24, found: true, hits }))).toBe(
      'searched the knowledge base: 2 passages, 1 cited',
    );
    expect(
      describe(event('knowledge.search', { turnId: 't', queryHash: 'e365', queryLength: 24, found: false, hits: [], query: 'Can I pay with PayPal?' })),
    ).toBe('searched the knowledge base for “Can I pay with PayPal?”: nothing found');
  });

  it('says the outcome, the agent who joined and after how long, no agent in time, a resolve, a rating and an error', () => {
    expect(describe(event('conversation.outcome', { outcome: 'handed_over', reopens: 0, startedAt: 1, reason: 'customer_asked', firstResponseMs: 806 }))).toBe(
      'outcome: handed over (customer asked)',
    );
    expect(describe(event('conversation.outcome', { outcome: 'resolved_confirmed', reopens: 0, startedAt: 1 }))).toBe('outcome: resolved confirmed');
    expect(describe(event('handoff.joined', { agent: { name: 'Ada', agentId: 'ag_1' }, agentId: 'ag_1', waitedMs: 70_800 }))).toBe('Ada joined after 1 min');
    expect(describe(event('handoff.offline', {}))).toBe('no one from the team answered in time: the customer was told they will reply here');
    expect(describe(event('handoff.released', { by: 'agent', agentId: 'ag_1', durationMs: 117_922, resolved: true }))).toBe(
      'resolved by an agent: the assistant has it again',
    );
    expect(describe(event('handoff.released', { by: 'agent', agentId: 'ag_1', durationMs: 5_000 }))).toBe('the assistant took over again');
    expect(describe(event('handoff.released', { by: 'idle', durationMs: 5_000 }))).toBe('no agent message for too long: the assistant took over again');
    expect(describe(event('conversation.rating', { score: 4 }))).toBe('rated 4 of 5');
    expect(describe(event('error', { code: 'tools_unavailable', message: 'no backend registered' }))).toBe('error tools_unavailable: no backend registered');
  });

  it('none of them falls back to raw JSON', () => {
    for (const type of ['knowledge.search', 'conversation.outcome', 'handoff.joined', 'handoff.offline', 'handoff.released', 'conversation.rating', 'error'])
      expect(describe(event(type, { outcome: 'open', hits: [], score: 3, code: 'x' }))).not.toMatch(/[{}]/);
  });
});
