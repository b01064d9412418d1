// The offline model's answers from the knowledge base (issue 36): it searches with the customer's words when no SDK
// function fits and the message asks something, answers with the first result's opening sentences cited as "[n]", and
// hands over when the customer says yes to the offer of a person. Reads `search_knowledge`'s result as plain JSON
// (src/knowledge/results.ts is its schema; the LLM layer does not import the knowledge feature).
import type { ChatMessage, ToolSpec } from './types.ts';

export const KNOWLEDGE_TOOL = 'search_knowledge';
const ANSWER_CHARS = 320;

const GREETING = /^\s*(hi|hello|hey|thanks|thank you|ok|okay|bye|good (morning|afternoon|evening))\b[\s!.,]*$/i;
const YES = /^\s*(yes|yeah|yep|sure|please|ok|okay|yes please|please do)\b/i;
const OFFERED_PERSON = /connect you with a person/i;

/** Whether the offline model should search the knowledge base for this message (a question, not a greeting). */
export function wantsKnowledge(message: string, tools: ToolSpec[], contentWords: number): boolean {
  return tools.some((t) => t.name === KNOWLEDGE_TOOL) && contentWords > 0 && !GREETING.test(message);
}

/** The customer said yes right after the assistant offered a person. */
export function acceptsPerson(messages: ChatMessage[]): boolean {
  const last = messages.at(-1);
  const before = messages.at(-2);
  return last?.role === 'user' && YES.test(last.content) && before?.role === 'assistant' && OFFERED_PERSON.test(before.content ?? '');
}

/** The first sentences of `text` (no Markdown list or heading marks), at most ANSWER_CHARS. */
function opening(text: string): string {
  const plain = text
    .split('\n')
    .map((l) => l.replace(/^\s*(?:[-*+]|\d+[.)]|#+)\s+/, '').trim())
    .filter(Boolean)
    .join(' ');
  const sentences = plain.match(/[^.!?]+[.!?]+(?:\s|$)/g) ?? [plain];
  let out = '';
  for (const s of sentences) {
    if (out && out.length + s.length > ANSWER_CHARS) break;
    out += s;
  }
  out = out.trim();
  return out.length > ANSWER_CHARS ? `${out.slice(0, ANSWER_CHARS - 1)}…` : out;
}

/** The reply to a `search_knowledge` result: the best result's opening, cited; nothing found: I don't know. */
export function answerFromKnowledge(content: string): string {
  let results: { n?: unknown; text?: unknown }[] = [];
  try {
    const parsed = JSON.parse(content) as { results?: unknown };
    if (Array.isArray(parsed.results)) results = parsed.results as typeof results;
  } catch {
    // An error text: nothing to answer from.
  }
  const best = results.find((r) => typeof r.n === 'number' && typeof r.text === 'string');
  if (!best) return "I'm sorry, I don't know the answer to that.";
  return `${opening(best.text as string)} [${best.n as number}]`;
}
