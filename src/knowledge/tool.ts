// The built-in `search_knowledge({query})` tool: a ToolSource (src/runtime/tool-source.ts) beside the SDK and MCP
// catalogues, offered while the knowledge base has articles. Its result is numbered chunks (results.ts); numbers run
// on across the searches of one turn (a chunk found twice keeps its number), so "[3]" means one chunk in the whole
// turn. Only relevant hits are given (relevance.ts); none: the model is told to say it does not know.
import type { InvokeContextInput } from '../../sdk/src/protocol.ts';
import type { Logger } from '../logger.ts';
import type { CatalogEntry, InvokeOutcome } from '../services.ts';
import type { ToolSource } from '../runtime/tool-source.ts';
import { relevantHits } from './relevance.ts';
import { CITE_INSTRUCTIONS, NOTHING_FOUND_INSTRUCTIONS, SEARCH_TOOL_NAME, type SearchResult, type SearchToolResult } from './results.ts';
import type { KnowledgeSearch } from './service.ts';

export const KNOWLEDGE_CONNECTION_ID = 'knowledge';
/** Chunks given per search, and the characters of each (the whole result stays under the machine's tool content cap). */
export const RESULTS_PER_SEARCH = 5;
const TEXT_CHARS = 1000;
/** Turns whose numbering is remembered (the oldest is forgotten first). */
const TURNS_KEPT = 2000;
/** How long a known "the knowledge base is empty or not" is trusted before it is read again (other nodes import too). */
const EMPTY_TTL_MS = 5000;

export const SEARCH_TOOL: CatalogEntry = {
  name: SEARCH_TOOL_NAME,
  description:
    "Search the company's help articles (the knowledge base) for the answer to the customer's question. Call it for any question about " +
    'policies, products, orders, shipping, returns, payments or accounts that the other tools do not answer. Results are numbered: cite them as [1].',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description: 'What to look for, in a few words (the customer’s question rephrased as keywords)' } },
    required: ['query'],
  },
  mode: 'read',
  visitors: true,
  connectionId: KNOWLEDGE_CONNECTION_ID,
};

/** The turn an invocation id belongs to: `<turnId>:<step>:<callId>` (machines/conversation.ts). */
export const turnOfInvocation = (invocationId: string | undefined) => invocationId?.split(':').slice(0, -2).join(':') || undefined;

export interface KnowledgeToolSource extends ToolSource {
  /** Reads whether the knowledge base has articles now (at start, and after this node changed it). */
  refresh(): Promise<void>;
}

export function createKnowledgeTool(o: { knowledge: KnowledgeSearch; now: () => number; logger?: Logger }): KnowledgeToolSource {
  const listeners = new Set<() => void>();
  let hasArticles = false;
  let checkedAt = -Infinity;
  let checking: Promise<void> | undefined;
  // Turn id → the numbers given so far in it (chunk id → n).
  const numbering = new Map<string, Map<string, number>>();

  const refresh = (): Promise<void> =>
    (checking ??= o.knowledge
      .isEmpty()
      .then((empty) => {
        checkedAt = o.now();
        if (empty === !hasArticles) return;
        hasArticles = !empty;
        for (const l of listeners) l();
      })
      .catch((err: Error) => o.logger?.warn({ err: { message: err.message } }, 'could not read whether the knowledge base is empty'))
      .finally(() => (checking = undefined)));

  const numbersFor = (turnId: string | undefined): Map<string, number> => {
    if (!turnId) return new Map();
    let m = numbering.get(turnId);
    if (!m) {
      m = new Map();
      numbering.set(turnId, m);
      if (numbering.size > TURNS_KEPT) numbering.delete(numbering.keys().next().value!);
    }
    return m;
  };

  const search = async (query: string, invocationId: string | undefined): Promise<SearchToolResult> => {
    const hits = relevantHits(query, await o.knowledge.search(query, { limit: RESULTS_PER_SEARCH * 2 })).slice(0, RESULTS_PER_SEARCH);
    if (hits.length === 0) return { results: [], instructions: NOTHING_FOUND_INSTRUCTIONS };
    const numbers = numbersFor(turnOfInvocation(invocationId));
    const results = hits.map((hit): SearchResult => {
      let n = numbers.get(hit.chunkId);
      if (n === undefined) numbers.set(hit.chunkId, (n = numbers.size + 1));
      const r: SearchResult = { n, title: hit.title, text: hit.text.slice(0, TEXT_CHARS), chunk: hit.chunkId, score: Math.round(hit.score * 1e4) / 1e4 };
      if (hit.heading) r.section = hit.heading;
      if (hit.url) r.url = hit.url;
      return r;
    });
    return { results, instructions: CITE_INSTRUCTIONS };
  };

  return {
    refresh,
    catalog() {
      if (o.now() - checkedAt > EMPTY_TTL_MS) void refresh();
      return hasArticles ? [SEARCH_TOOL] : [];
    },
    owns: (name) => name === SEARCH_TOOL_NAME,
    async invoke(_name, args, _context: InvokeContextInput, options): Promise<InvokeOutcome> {
      const query = (args as { query?: unknown } | null)?.query;
      if (typeof query !== 'string' || !query.trim()) return { ok: false, error: { code: 'invalid_arguments', message: '"query" must be a non-empty string' } };
      try {
        return { ok: true, data: await search(query.trim().slice(0, 1000), options.invocationId) };
      } catch (err) {
        o.logger?.warn({ err: { message: (err as Error).message } }, 'knowledge search failed');
        return { ok: false, error: { code: 'tool_error', message: 'The knowledge base could not be searched just now' } };
      }
    },
    onChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
