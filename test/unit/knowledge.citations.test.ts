// Issue 36, part 3: a reply's citations checked against the turn's transcript (pure), and WhatsApp's Sources line.
import { describe, expect, it } from 'vitest';
import type { TurnEntry } from '../../machines/conversation.ts';
import { citeSources } from '../../src/knowledge/citations.ts';
import { CITE_INSTRUCTIONS, NOTHING_FOUND_INSTRUCTIONS, type SearchResult } from '../../src/knowledge/results.ts';
import { toWhatsAppReply, WHATSAPP_TEXT_MAX } from '../../src/whatsapp/format.ts';

const result = (n: number, article: string, position = 0, url?: string): SearchResult =>
  Object.assign({ n, title: `Title of ${article}`, text: `text ${n}`, chunk: `${article}#${position}`, score: 1 / n }, url ? { url } : {});

function turn(...searches: { query: string; results: SearchResult[] }[]): TurnEntry[] {
  const out: TurnEntry[] = [{ role: 'user', text: 'question' }];
  searches.forEach((s, i) => {
    out.push({ role: 'assistant', toolCalls: [{ id: `c${i}`, name: 'search_knowledge', args: { query: s.query }, requiresConfirmation: false, summary: '' }] });
    const content = JSON.stringify({ results: s.results, instructions: s.results.length ? CITE_INSTRUCTIONS : NOTHING_FOUND_INSTRUCTIONS });
    out.push({ role: 'tool', callId: `c${i}`, name: 'search_knowledge', ok: true, content });
  });
  return out;
}

describe('citations', () => {
  it('renumbers in order of first use, one number per article, and drops numbers the turn did not retrieve', () => {
    const t = turn(
      { query: 'returns', results: [result(1, 'returns', 0, 'https://h/returns'), result(2, 'shipping'), result(3, 'returns', 1, 'https://h/returns')] },
      { query: 'refunds', results: [result(4, 'refunds', 0, 'https://h/refunds')] },
    );
    const r = citeSources(t, 'Refunds take 5 days [4]. Returns are free [3] for 30 days [1, 3]. Gifts too [9]. See [2](https://made.up/x).');
    expect(r.text).toBe('Refunds take 5 days [1]. Returns are free [2] for 30 days [2]. Gifts too. See [3].');
    expect(r.sources).toEqual([
      { n: 1, title: 'Title of refunds', url: 'https://h/refunds' },
      { n: 2, title: 'Title of returns', url: 'https://h/returns' },
      { n: 3, title: 'Title of shipping' },
    ]);
    expect(r.nothingFound).toBe(false);
    expect(r.searches).toEqual([
      {
        query: 'returns',
        hits: [
          { chunkId: 'returns#0', articleId: 'returns', score: 1, cited: true },
          { chunkId: 'shipping#0', articleId: 'shipping', score: 0.5, cited: true },
          { chunkId: 'returns#1', articleId: 'returns', score: 1 / 3, cited: true },
        ],
      },
      { query: 'refunds', hits: [{ chunkId: 'refunds#0', articleId: 'refunds', score: 0.25, cited: true }] },
    ]);
  });

  it('without a search in the turn every marker goes; a failed or unreadable search retrieves nothing', () => {
    expect(citeSources([{ role: 'user', text: 'q' }], 'As I said [1].')).toMatchObject({ text: 'As I said.', sources: [], nothingFound: false });
    const failed: TurnEntry[] = [
      { role: 'assistant', toolCalls: [{ id: 'c', name: 'search_knowledge', args: { query: 'x' }, requiresConfirmation: false, summary: '' }] },
      { role: 'tool', callId: 'c', name: 'search_knowledge', ok: false, content: JSON.stringify({ results: [result(1, 'a')], instructions: '' }) },
    ];
    expect(citeSources(failed, 'Yes [1].')).toMatchObject({ text: 'Yes.', sources: [], nothingFound: true });
    // An SDK function's result that looks like a search result is not one.
    const lookalike: TurnEntry[] = [
      { role: 'tool', callId: 'c', name: 'lookup', ok: true, content: JSON.stringify({ results: [result(1, 'a')], instructions: '' }) },
    ];
    expect(citeSources(lookalike, 'Yes [1].')).toMatchObject({ text: 'Yes.', sources: [], nothingFound: false });
  });

  it('nothing found only when every search came back empty and no other tool answered', () => {
    expect(citeSources(turn({ query: 'moon', results: [] }), 'Maybe [1].').nothingFound).toBe(true);
    const withOrder: TurnEntry[] = [...turn({ query: 'moon', results: [] }), { role: 'tool', callId: 'o', name: 'getOrder', ok: true, content: '{}' }];
    expect(citeSources(withOrder, 'Your order is on its way.').nothingFound).toBe(false);
    expect(citeSources(turn({ query: 'moon', results: [] }, { query: 'returns', results: [result(1, 'r')] }), 'Free [1].').nothingFound).toBe(false);
  });
});

describe("WhatsApp's Sources line", () => {
  it('follows the text as plain "Sources: 1. Title – url; 2. Title", and the whole stays within 4096 characters', () => {
    expect(
      toWhatsAppReply('Returns are **free** [1][2].', [
        { n: 1, title: 'Returns', url: 'https://h/r' },
        { n: 2, title: 'Shipping' },
      ]),
    ).toBe('Returns are *free* [1][2].\n\nSources: 1. Returns – https://h/r; 2. Shipping');
    expect(toWhatsAppReply('No sources.', [])).toBe('No sources.');
    const many = Array.from({ length: 20 }, (_, i) => ({ n: i + 1, title: 'T'.repeat(200), url: `https://help.example.com/${'p'.repeat(100)}/${i}` }));
    const long = toWhatsAppReply('x'.repeat(5000), many);
    expect(long.length).toBeLessThanOrEqual(WHATSAPP_TEXT_MAX);
    const line = long.slice(long.indexOf('\n\nSources: ') + 2);
    expect(line).toMatch(/^Sources: 1\. T{79}… – https:\/\/help\.example\.com\//);
    expect(line.length).toBeLessThanOrEqual(1000);
    // Whole sources are left out, never one cut half-way.
    expect(line).toMatch(/\/\d+$/);
    expect(long).toMatch(/^x+…\n\nSources: /);
  });
});
