// A reply's citations, checked against what the turn retrieved (Chatwoot Captain's rule): a marker "[n]" is kept only
// when n is a `search_knowledge` result of THIS turn's transcript; the rest ("[7]" the model made up, a link it wrote
// on a number) are taken out. Kept sources are numbered anew in order of first use, one number per article, and the
// reply's markers are rewritten to match. Pure: the transcript in, the reply text, its sources and what each search
// found (for telemetry) out.
import type { ReplySource, TurnEntry } from '../../machines/conversation.ts';
import { articleOfChunk, parseSearchContent, SEARCH_TOOL_NAME, type SearchResult } from './results.ts';

export type { ReplySource };

export interface SearchReport {
  query: string;
  hits: { chunkId: string; articleId: string; score: number; cited: boolean }[];
}

export interface CitedReply {
  text: string;
  sources: ReplySource[];
  /** Each `search_knowledge` call of the turn that answered (in order), and whether its hits were cited. */
  searches: SearchReport[];
  /** The turn asked the knowledge base, every search came back empty, and no other tool answered. */
  nothingFound: boolean;
}

/** "[1]", "[1, 3]", "[2](https://…)": one marker, its numbers in group 1. */
const MARKER = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\](?:\([^)\s]*\))?/g;
/** Stands for a dropped marker until the spaces before it are taken away with it (a private-use character). */
const DROPPED = '\uE001';

interface Retrieved {
  byNumber: Map<number, SearchResult>;
  searches: { query: string; results: SearchResult[] }[];
  otherToolAnswered: boolean;
  searched: boolean;
}

function retrievedIn(transcript: TurnEntry[]): Retrieved {
  const queries = new Map<string, string>();
  const out: Retrieved = { byNumber: new Map(), searches: [], otherToolAnswered: false, searched: false };
  for (const e of transcript) {
    if (e.role === 'assistant') {
      for (const c of e.toolCalls) if (c.name === SEARCH_TOOL_NAME) queries.set(c.id, String((c.args as { query?: unknown } | null)?.query ?? ''));
    } else if (e.role === 'tool') {
      if (e.name !== SEARCH_TOOL_NAME) {
        if (e.ok) out.otherToolAnswered = true;
        continue;
      }
      out.searched = true;
      const parsed = e.ok ? parseSearchContent(e.content) : undefined;
      if (!parsed) continue;
      out.searches.push({ query: queries.get(e.callId) ?? '', results: parsed.results });
      for (const r of parsed.results) out.byNumber.set(r.n, r);
    }
  }
  return out;
}

export function citeSources(transcript: TurnEntry[], text: string): CitedReply {
  const got = retrievedIn(transcript);
  const sources: ReplySource[] = [];
  const numberOfArticle = new Map<string, number>();
  const citedChunks = new Set<string>();
  const rewritten = text.replace(MARKER, (_whole, list: string) => {
    const kept: number[] = [];
    for (const part of list.split(',')) {
      const hit = got.byNumber.get(Number(part.trim()));
      if (!hit) continue;
      citedChunks.add(hit.chunk);
      const article = articleOfChunk(hit.chunk);
      let n = numberOfArticle.get(article);
      if (n === undefined) {
        n = sources.length + 1;
        numberOfArticle.set(article, n);
        sources.push(hit.url ? { n, title: hit.title, url: hit.url } : { n, title: hit.title });
      }
      if (!kept.includes(n)) kept.push(n);
    }
    return kept.length ? kept.map((n) => `[${n}]`).join('') : DROPPED;
  });
  // A dropped marker takes the spaces before it along ("fact [7]." → "fact.").
  const clean = rewritten.replace(/[ \t]*\uE001+/g, '').trim();
  const searches = got.searches.map((s) => ({
    query: s.query,
    hits: s.results.map((r) => ({ chunkId: r.chunk, articleId: articleOfChunk(r.chunk), score: r.score, cited: citedChunks.has(r.chunk) })),
  }));
  const nothingFound = got.searched && got.byNumber.size === 0 && !got.otherToolAnswered;
  return { text: clean || text.replace(MARKER, '').trim(), sources, searches, nothingFound };
}

/** What the assistant says when the knowledge base has nothing relevant: it does not know, and (with handoff) offers a person. */
export function dontKnowReply(canHandOff: boolean): string {
  return canHandOff
    ? "I'm sorry, I don't know the answer to that: I couldn't find it in our help articles. Would you like me to connect you with a person from our support team?"
    : "I'm sorry, I don't know the answer to that: I couldn't find it in our help articles.";
}
