// What `search_knowledge` gives the model, as one wire shape both ends share: the tool writes it (tool.ts), the reply
// path reads it back from the turn's transcript (citations.ts) to keep only citations of chunks retrieved in the turn.
// Each result carries its number ([n] in the reply), where it comes from (title, section, url) and its chunk.
import { z } from 'zod';

export const SEARCH_TOOL_NAME = 'search_knowledge';

export const SearchResult = z.object({
  n: z.number().int().min(1),
  title: z.string(),
  section: z.string().optional(),
  url: z.string().optional(),
  text: z.string(),
  chunk: z.string(),
  score: z.number(),
});
export type SearchResult = z.infer<typeof SearchResult>;

export const SearchToolResult = z.object({
  results: z.array(SearchResult),
  instructions: z.string(),
});
export type SearchToolResult = z.infer<typeof SearchToolResult>;

/** Told with results: cite by number, answer from them only. */
export const CITE_INSTRUCTIONS =
  'Answer only from these results. After each fact, cite the result it comes from by its number in square brackets, like [1]. ' +
  'Do not write URLs or a list of sources yourself: Parley adds them. If the results do not answer the question, say you do not know and offer a person.';

/** Told when nothing relevant was found. */
export const NOTHING_FOUND_INSTRUCTIONS =
  'Nothing in the knowledge base answers this. Do not guess and do not answer from general knowledge: say you do not know, and offer to ' +
  'connect the customer with a person from the support team.';

/** The article a chunk id belongs to (`<article id>#<position>`). */
export const articleOfChunk = (chunkId: string) => {
  const i = chunkId.lastIndexOf('#');
  return i > 0 ? chunkId.slice(0, i) : chunkId;
};

/** The results in a `search_knowledge` tool content, or undefined when it is not one (an error, a cut text). */
export function parseSearchContent(content: string): SearchToolResult | undefined {
  try {
    const parsed = SearchToolResult.safeParse(JSON.parse(content));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
