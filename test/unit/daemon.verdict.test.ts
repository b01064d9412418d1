// The reflection verdict parser: lenient on form, strict on meaning.
import { describe, expect, it } from 'vitest';
import { parseVerdict } from '../../src/daemon/reflection.ts';
import { reflect } from '../../src/llm/offline.ts';

describe('parseVerdict', () => {
  it('prose falls back to unclear, keeping the start of the text as the summary', () => {
    expect(parseVerdict('I think the customer was happy.')).toEqual({ verdict: 'unclear', summary: 'I think the customer was happy.' });
    expect(parseVerdict('')).toMatchObject({ verdict: 'unclear' });
    expect(parseVerdict(null)).toMatchObject({ verdict: 'unclear' });
  });

  it('accepts a fenced JSON block and JSON inside prose', () => {
    expect(parseVerdict('```json\n{"verdict":"resolved","summary":"done"}\n```')).toEqual({ verdict: 'resolved', summary: 'done' });
    expect(parseVerdict('Here you go:\n```\n{"verdict":"unresolved","summary":"s","followup":"Hi"}\n```\nThanks')).toEqual({
      verdict: 'unresolved',
      summary: 's',
      followup: 'Hi',
    });
    expect(parseVerdict('Verdict: {"verdict":"resolved","summary":"ok"}')).toEqual({ verdict: 'resolved', summary: 'ok' });
  });

  it('an empty or null follow-up is no follow-up, not a parse failure', () => {
    expect(parseVerdict('{"verdict":"resolved","summary":"ok","followup":""}')).toEqual({ verdict: 'resolved', summary: 'ok' });
    expect(parseVerdict('{"verdict":"resolved","summary":"ok","followup":null}')).toEqual({ verdict: 'resolved', summary: 'ok' });
    expect(parseVerdict('{"verdict":"unresolved","summary":null,"followup":"  "}')).toEqual({ verdict: 'unresolved', summary: '' });
  });

  it('the verdict is case-insensitive; an unknown verdict is unclear', () => {
    expect(parseVerdict('{"verdict":"RESOLVED","summary":"ok"}').verdict).toBe('resolved');
    expect(parseVerdict('{"verdict":" Unresolved ","summary":"ok"}').verdict).toBe('unresolved');
    expect(parseVerdict('{"verdict":"maybe","summary":"ok"}').verdict).toBe('unclear');
  });

  it('an over-long summary or follow-up is clipped, not rejected', () => {
    const v = parseVerdict(JSON.stringify({ verdict: 'unresolved', summary: 's'.repeat(5000), followup: 'f'.repeat(5000) }));
    expect(v.verdict).toBe('unresolved');
    expect(v.summary).toHaveLength(2000);
    expect(v.followup).toHaveLength(1000);
  });

  it('reads the offline provider verdicts', () => {
    expect(parseVerdict(JSON.stringify(reflect('Conversation transcript:\ncustomer: hello')))).toMatchObject({
      verdict: 'unresolved',
      followup: expect.any(String),
    });
    expect(parseVerdict(JSON.stringify(reflect('Conversation transcript:\ncustomer: status\ntool getOrderStatus: ok\nassistant: shipped')))).toEqual({
      verdict: 'resolved',
      summary: 'The request was handled and answered.',
    });
  });
});
