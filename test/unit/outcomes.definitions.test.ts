// The outcome definitions of docs/outcomes.md, as pure functions: each outcome, the reopen window, the reason
// categories, and the time an open episode is decided.
import { describe, expect, it } from 'vitest';
import { applyFact, asksCustomer, categoryOf, confirmsResolution, decide, type OutcomeFact } from '../../src/outcomes/definitions.ts';
import { dontKnowReply } from '../../src/knowledge/citations.ts';
import type { ConversationOutcome } from '../../src/store/outcomes.ts';

const H = 3_600_000;
const settings = { assumeAfterMs: 24 * H, reopenMs: 7 * 24 * H };
const meta = { conversationId: 'c1', customerId: 'cus_1', channel: 'web' as const };

function play(facts: OutcomeFact[], start?: ConversationOutcome) {
  let record = start;
  const changes: string[] = [];
  for (const f of facts) {
    const next = applyFact(record, meta, f, settings);
    record = next.record;
    changes.push(...next.changes.map((c) => c.outcome));
  }
  return { record: record!, changes };
}

const atRest = (r: ConversationOutcome) => decide(r, r.decideAt!)?.outcome;
/** The outcome a conversation of these facts comes to once left alone. */
const settled = (...facts: OutcomeFact[]) => atRest(play(facts).record);

describe('outcome definitions', () => {
  it('resolved, assumed: the assistant answered and nothing came for assume_after_hours; decided then, not before', () => {
    const { record, changes } = play([
      { kind: 'customer', at: 1000, text: 'Where is order 1001?' },
      { kind: 'reply', at: 3000, text: 'Order 1001 is shipped.' },
    ]);
    expect(changes).toEqual([]);
    expect(record).toMatchObject({ status: 'open', startedAt: 1000, firstResponseAt: 3000, decideAt: 3000 + 24 * H });
    expect(decide(record, 3000 + 24 * H - 1)).toBeUndefined();
    const c = decide(record, 3000 + 30 * H)!;
    expect(c.outcome).toBe('resolved_assumed');
    expect(c.record).toMatchObject({ status: 'resolved_assumed', endedAt: 3000 });
    expect(c.record.decideAt).toBeUndefined();
  });

  it('resolved, confirmed: the customer says so, or answers yes; a no makes it unresolved', () => {
    const base: OutcomeFact[] = [
      { kind: 'customer', at: 1000, text: 'How do I reset my password?' },
      { kind: 'reply', at: 2000, text: 'Use the link on the sign-in page.' },
    ];
    expect(play([...base, { kind: 'customer', at: 3000, text: 'That worked, thanks!' }]).changes).toEqual(['resolved_confirmed']);
    expect(play([...base, { kind: 'answer', at: 3000, yes: true }]).record).toMatchObject({ status: 'resolved_confirmed', endedAt: 3000 });
    const no = play([...base, { kind: 'answer', at: 3000, yes: false }]).record;
    expect(no.status).toBe('open');
    expect(atRest(no)).toBe('unresolved');
    expect(settled(...base, { kind: 'customer', at: 3000, text: "thanks but that didn't help" })).toBe('unresolved');
  });

  it('a resolution is undone (reopened) when the customer writes again within the reopen window; later, a new episode starts', () => {
    const resolved = play([
      { kind: 'customer', at: 1000, text: 'hi' },
      { kind: 'reply', at: 2000, text: 'Done.' },
      { kind: 'answer', at: 3000, yes: true },
    ]).record;
    const again = play([{ kind: 'customer', at: 3000 + 7 * 24 * H, text: 'It broke again' }], resolved);
    expect(again.changes).toEqual(['reopened']);
    expect(again.record).toMatchObject({ status: 'open', reopens: 1, startedAt: 1000 });
    const later = play([{ kind: 'customer', at: 3001 + 7 * 24 * H, text: 'New question' }], resolved);
    expect(later.changes).toEqual([]);
    expect(later.record).toMatchObject({ status: 'open', reopens: 0, startedAt: 3001 + 7 * 24 * H });
  });

  it('handed over at once with its reason category; the person keeps the episode until released', () => {
    const { record, changes } = play([
      { kind: 'customer', at: 1000, text: 'I want a person' },
      { kind: 'handoff', at: 1500, source: 'model', reason: 'The customer asked for a person' },
      { kind: 'customer', at: 2000, text: 'hello?' },
      { kind: 'agent', at: 2500 },
    ]);
    expect(changes).toEqual(['handed_over']);
    expect(record).toMatchObject({ status: 'handed_over', reason: 'customer_asked', reasonBy: 'model', withHuman: true, firstResponseAt: 2500 });
    expect(record.decideAt).toBeUndefined();
    const released = play(
      [
        { kind: 'released', at: 3000 },
        { kind: 'customer', at: 4000, text: 'next' },
      ],
      record,
    ).record;
    expect(released).toMatchObject({ status: 'open', startedAt: 4000, reopens: 0 });
  });

  it('abandoned: the customer left while asked something (a question, a confirmation); unresolved: their message went unanswered', () => {
    expect(settled({ kind: 'customer', at: 1, text: 'refund' }, { kind: 'reply', at: 2, text: 'Which order do you mean?' })).toBe('abandoned');
    expect(settled({ kind: 'customer', at: 1, text: 'cancel it' }, { kind: 'confirm', at: 2 })).toBe('abandoned');
    expect(settled({ kind: 'customer', at: 1, text: 'cancel it' }, { kind: 'confirm', at: 2 }, { kind: 'confirmation', at: 9, outcome: 'expired' })).toBe(
      'abandoned',
    );
    expect(settled({ kind: 'customer', at: 1, text: 'hello' })).toBe('unresolved');
    expect(settled({ kind: 'customer', at: 1, text: 'x' }, { kind: 'reply', at: 2, text: 'Order 1 is shipped. Anything else I can help with?' })).toBe(
      'resolved_assumed',
    );
  });

  it("unresolved: the last answer was Parley's own I don't know (nothing in the knowledge base), with or without a person offered", () => {
    for (const offered of [true, false]) {
      const facts: OutcomeFact[] = [
        { kind: 'customer', at: 1, text: 'How do I export to PDF?' },
        { kind: 'reply', at: 2, text: dontKnowReply(offered) },
      ];
      expect(settled(...facts)).toBe('unresolved');
      // Answered afterwards (by the assistant or a person), it is decided by that answer again.
      expect(settled(...facts, { kind: 'customer', at: 3, text: 'and the invoice?' }, { kind: 'reply', at: 4, text: 'It is in Billing.' })).toBe(
        'resolved_assumed',
      );
    }
    // A reply marked unanswered, whatever its words (another language, a text this code does not know).
    expect(settled({ kind: 'customer', at: 1, text: '¿Exportar a PDF?' }, { kind: 'reply', at: 2, text: 'Lo siento, no lo sé.', unanswered: true })).toBe(
      'unresolved',
    );
  });

  it('reason categories: named first, else from the words, else other; phrases and questions', () => {
    expect(categoryOf('policy: refund over the limit')).toBe('policy');
    expect(categoryOf('missing_knowledge')).toBe('missing_knowledge');
    expect(categoryOf('The customer asked for a person')).toBe('customer_asked');
    expect(categoryOf('the order tool failed twice')).toBe('tool_failure');
    expect(categoryOf(undefined)).toBe('other');
    expect(categoryOf('hmm')).toBe('other');
    expect(confirmsResolution('great, thanks')).toBe(true);
    expect(confirmsResolution('that did not help')).toBe(false);
    expect(asksCustomer('Could you tell me?')).toBe(true);
    expect(asksCustomer('Done. Is there anything else?')).toBe(false);
  });
});

describe('the estimated experience', () => {
  it("reads the model's score and one-line reason, a review verdict as a score, and nothing from prose", async () => {
    const { parseExperience } = await import('../../src/outcomes/experience.ts');
    expect(parseExperience('{"score": 4, "reason": "Answered quickly\\nand well"}')).toEqual({ score: 4, comment: 'Answered quickly' });
    expect(parseExperience('Here: {"score": "2", "reason": "slow"} done')).toEqual({ score: 2, comment: 'slow' });
    expect(parseExperience('{"verdict": "resolved", "summary": "The order status was given."}')).toEqual({ score: 4, comment: 'The order status was given.' });
    expect(parseExperience('{"score": 9, "reason": "x"}')).toBeUndefined();
    expect(parseExperience('great conversation')).toBeUndefined();
    expect(parseExperience(null)).toBeUndefined();
  });
});
