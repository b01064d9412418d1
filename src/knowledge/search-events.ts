// The telemetry of one knowledge search (event `knowledge.search`, issue 36): its hits (chunk, article, score, cited
// or not) and its query — the text only with `telemetry.store_text`, otherwise a hash (questions asked again are
// still counted together) and its length. The dashboard's content gaps and most-used articles read these.
import { createHash } from 'node:crypto';
import type { SearchReport } from './citations.ts';

export const SEARCH_EVENT = 'knowledge.search';

export interface SearchEventData extends Record<string, unknown> {
  turnId: string;
  queryHash: string;
  queryLength: number;
  query?: string;
  found: boolean;
  hits: SearchReport['hits'];
}

/** The same words in another case or spacing hash the same. */
export const queryHash = (query: string) => createHash('sha256').update(query.trim().toLowerCase().replace(/\s+/g, ' ')).digest('hex').slice(0, 16);

export function searchEvent(s: SearchReport, turn: { turnId: string }, storeText: boolean): { data: SearchEventData } {
  const data: SearchEventData = { turnId: turn.turnId, queryHash: queryHash(s.query), queryLength: s.query.length, found: s.hits.length > 0, hits: s.hits };
  if (storeText) data.query = s.query;
  return { data };
}
