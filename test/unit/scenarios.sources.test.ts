// Cited sources (`expect: { reply: { sources: [...] } }`): read from the message frames the customer receives
// (`sources: [{ n, title, url? }]`, the knowledge answers' citations), checked with a diff that names what was cited.
import { describe, expect, it } from 'vitest';
import { checkLocal } from '../../src/scenarios/expectations.ts';
import { observedOf, parseFrame, type SessionFrame } from '../../src/scenarios/frames.ts';
import { Expectation, Scenario } from '../../src/scenarios/schema.ts';

/** The frames of one turn as they come over the socket (JSON text), parsed as the session parses them. */
function turn(...raw: Record<string, unknown>[]): SessionFrame[] {
  return raw.map((r) => parseFrame(JSON.parse(JSON.stringify(r)))!).filter(Boolean);
}

const reply = (text: string, sources?: unknown) =>
  Object.assign({ type: 'message', id: `m-${text.length}`, role: 'assistant', text, at: 1 }, sources === undefined ? {} : { sources });

const returns = [
  { n: 1, title: 'Returns and refunds', url: 'https://help.example.com/returns' },
  { n: 2, title: 'Shipping times' },
];

const check = (e: unknown, frames: SessionFrame[]) => checkLocal(Expectation.parse(e), observedOf(frames, [], false), { tool: 0 });

describe('cited sources in scenarios', () => {
  it('keeps the sources of a message frame, and drops a malformed list rather than guessing', () => {
    const [kept] = turn(reply('You have 30 days [1].', returns));
    expect(kept.type === 'message' && kept.sources).toEqual(returns);
    const [bad] = turn(reply('Hm.', [{ title: 'no number' }]));
    expect(bad.type === 'message' && bad.sources).toEqual([]);
    expect(parseFrame({ type: 'nonsense' })).toBeUndefined();
  });

  it('holds when each expected source is cited: by title (case-insensitive), url or number', () => {
    const frames = turn({ type: 'typing', on: true }, reply('You have 30 days to return it [1].', returns));
    expect(check({ reply: { contains: '30 days', sources: ['returns and refunds'] } }, frames)).toEqual([]);
    expect(check({ reply: { sources: [{ url: 'help.example.com/returns', n: 1 }, 'Shipping'] } }, frames)).toEqual([]);
  });

  it('names what was cited instead when an expected source is missing', () => {
    const frames = turn(reply('Shipping takes 3 days [2].', [returns[1]]));
    expect(check({ reply: { sources: ['Returns', 'shipping'] } }, frames)).toEqual([
      { expected: 'the reply cites "Returns"', happened: 'the reply cites [2] Shipping times' },
    ]);
    expect(check({ reply: { sources: [{ title: 'shipping', n: 1 }] } }, frames)).toEqual([
      { expected: 'the reply cites a source ⊇ {"title":"shipping","n":1}', happened: 'the reply cites [2] Shipping times' },
    ]);
  });

  it('an empty list: the reply cites nothing (the knowledge had no answer); a reply without sources cites none', () => {
    expect(check({ reply: { sources: [] } }, turn(reply('I could not find that; shall I get a person?')))).toEqual([]);
    expect(check({ reply: { sources: [] } }, turn(reply('You have 30 days [1].', returns)))).toEqual([
      {
        expected: 'the reply cites no source',
        happened: 'the reply cites [1] Returns and refunds <https://help.example.com/returns>, [2] Shipping times',
      },
    ]);
    expect(check({ reply: { sources: ['Returns'] } }, turn(reply('No idea.')))).toEqual([
      { expected: 'the reply cites "Returns"', happened: 'the reply cites no source' },
    ]);
  });

  it('is part of the scenario file, only on replies', () => {
    const base = { name: 's', customer: { externalId: 'c' } };
    expect(Scenario.safeParse({ ...base, steps: [{ customer: 'hi' }, { expect: { reply: { sources: ['Returns', { url: '/returns' }] } } }] }).success).toBe(
      true,
    );
    expect(Scenario.safeParse({ ...base, steps: [{ customer: 'hi' }, { expect: { proactive: { sources: ['Returns'] } } }] }).success).toBe(false);
    expect(Scenario.safeParse({ ...base, steps: [{ customer: 'hi' }, { expect: { reply: { sources: [{ page: 3 }] } } }] }).success).toBe(false);
  });
});
