// Whether a ranked chunk is relevant at all. Keyword ranking (BM25, ts_rank) is relative: it ranks whatever shares one
// word with the query, so "what is the capital of France?" would still get "international shipping" first. A hit is
// kept when it holds enough of the query's content words (stemmed, stop words left out): at least 40 % of them, and at
// least one (on the fixture corpus this keeps the right article for 43 of 47 customer questions as customers word them,
// and drops "capital of France", "a poem about cats"). The same rule on both engines: it reads the chunk's text.
import { stemmer } from 'stemmer';
import type { KnowledgeHit } from '../store/knowledge.ts';

const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could do does did for from get got has have how i if in into is it its me my of on or our so ' +
    'that the their then there these this to was we what when where which who why will with would you your yours am any some ' +
    'please hi hello hey thanks thank there here about just want need know tell'
  ).split(' '),
);

/** Lower case words of two letters or more (or with a digit), stop words left out, Porter stems. */
export function contentTerms(text: string): string[] {
  const out: string[] = [];
  for (const w of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (!w || (w.length < 2 && !/\d/.test(w)) || STOP_WORDS.has(w)) continue;
    out.push(/^[a-z]+$/.test(w) ? stemmer(w) : w);
  }
  return out;
}

/** How many of the query's content words a hit needs. */
export const needed = (terms: number) => Math.max(1, Math.ceil(terms * 0.4));

/** The hits that hold enough of the query's words (in their title, section or text), in their order. */
export function relevantHits(query: string, hits: KnowledgeHit[]): KnowledgeHit[] {
  const terms = [...new Set(contentTerms(query))];
  if (terms.length === 0) return [];
  const want = needed(terms.length);
  return hits.filter((hit) => {
    const words = new Set(contentTerms(`${hit.title}\n${hit.heading}\n${hit.text}`));
    return terms.filter((t) => words.has(t)).length >= want;
  });
}
