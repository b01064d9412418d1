// The embedded default LLM: deterministic, no network, no dependencies.
// It picks a registered function by matching the customer's words against
// function names and descriptions, fills string/number parameters from the
// message, and answers with the function's result values in a sentence.
// For reflection it reads the transcript and gives a rule-based verdict.
// A reply is streamed to `onText` a few words at a time.
import { acceptsPerson, answerFromKnowledge, KNOWLEDGE_TOOL, wantsKnowledge } from './offline-knowledge.ts';
import { LlmError, TRANSCRIPT_HEADER, type ChatMessage, type LlmProvider, type LlmRequest, type LlmResponse, type ToolSpec } from './types.ts';

const STOPWORDS = new Set(
  'a an the of to for in on at by is are was be my me i you your we our it its this that what whats which who how can could would will please do does did with and or about get set show tell give check'.split(
    ' ',
  ),
);

export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

export function stem(word: string): string {
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return word;
}

const keywords = (text: string) =>
  new Set(
    words(text)
      .filter((w) => !STOPWORDS.has(w))
      .map(stem),
  );

/** Scores each tool against the message; the best with at least one name word in common wins. */
export function chooseTool(message: string, tools: ToolSpec[]): ToolSpec | undefined {
  const said = keywords(message);
  let best: { tool: ToolSpec; score: number } | undefined;
  for (const tool of tools) {
    const nameWords = keywords(tool.name);
    const descWords = keywords(tool.description);
    let nameHits = 0;
    let descHits = 0;
    for (const w of said) {
      if (nameWords.has(w)) nameHits++;
      else if (descWords.has(w)) descHits++;
    }
    // A name word that is specific to this tool (its verb) matters most.
    const score = nameHits * 2 + descHits;
    if (nameHits > 0 && (!best || score > best.score)) best = { tool, score };
  }
  return best?.tool;
}

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; required?: string[]; enum?: unknown[] };

const typeOf = (s: JsonSchema | undefined) => (Array.isArray(s?.type) ? s!.type[0] : s?.type);

/** Fills parameters from the message; returns the names of required ones it could not fill. */
export function fillArguments(message: string, schema: Record<string, unknown>): { args: Record<string, unknown>; missing: string[] } {
  const s = schema as JsonSchema;
  const args: Record<string, unknown> = {};
  const numbers = message.match(/\d+(?:\.\d+)?/g) ?? [];
  const idLike = message.match(/\b[A-Za-z]*\d[\w-]*\b/g) ?? [];
  const email = message.match(/[\w.+-]+@[\w-]+\.[\w.-]+/)?.[0];
  const quoted = message.match(/"([^"]+)"|'([^']+)'/);
  let numberIndex = 0;
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    const t = typeOf(prop);
    if (t === 'number' || t === 'integer') {
      const n = numbers[numberIndex++];
      if (n !== undefined) args[name] = t === 'integer' ? Math.trunc(Number(n)) : Number(n);
    } else if (t === 'string' || t === undefined) {
      if (/email/i.test(name)) {
        if (email) args[name] = email;
      } else if (Array.isArray(prop.enum)) {
        const hit = prop.enum.find((v) => typeof v === 'string' && message.toLowerCase().includes(v.toLowerCase()));
        if (hit !== undefined) args[name] = hit;
      } else if (/(id|number|code|ref|reference)$/i.test(name) || /^id$/i.test(name)) {
        const v = idLike[numberIndex++] ?? undefined;
        if (v !== undefined) args[name] = v;
      } else if (quoted) {
        args[name] = quoted[1] ?? quoted[2];
      }
    } else if (t === 'boolean') {
      if (/\b(yes|true)\b/i.test(message)) args[name] = true;
      else if (/\b(no|false)\b/i.test(message)) args[name] = false;
    }
  }
  const missing = (s.required ?? []).filter((r) => args[r] === undefined);
  return { args, missing };
}

const humanize = (key: string) => words(key).join(' ');

function describeValue(v: unknown): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'object') return Array.isArray(v) ? v.map(describeValue).join(', ') : JSON.stringify(v);
  return String(v);
}

/** "Order 1001 is processing (items: 2 × coffee beans, eta: 2026-11-27)." */
export function sentenceFor(data: unknown): string {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return `Here is what I found: ${describeValue(data)}.`;
  const entries = Object.entries(data as Record<string, unknown>);
  const idEntry = entries.find(([k]) => /id$/i.test(k) && k.length > 2);
  const statusEntry = entries.find(([k]) => /^(status|state)$/i.test(k));
  const rest = entries.filter(([k]) => k !== idEntry?.[0] && k !== statusEntry?.[0]).map(([k, v]) => `${humanize(k)}: ${describeValue(v)}`);
  if (idEntry) {
    const subject = `${capitalize(humanize(idEntry[0].replace(/id$/i, '')) || 'Item')} ${describeValue(idEntry[1])}`;
    const state = statusEntry ? ` is ${describeValue(statusEntry[1])}` : '';
    return `${subject}${state}${rest.length ? ` (${rest.join(', ')})` : ''}.`;
  }
  if (statusEntry) return `The status is ${describeValue(statusEntry[1])}${rest.length ? ` (${rest.join(', ')})` : ''}.`;
  return `Here is what I found: ${rest.join(', ')}.`;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function answerFromToolResults(results: Extract<ChatMessage, { role: 'tool' }>[]): string {
  return results
    .map((r) => {
      const c = r.content;
      if (/^The customer declined/.test(c)) return "OK — I didn't go ahead with that; nothing was changed.";
      if (/did not confirm in time/.test(c)) return 'The confirmation timed out, so I did not go ahead; nothing was changed.';
      if (/^Error/.test(c)) return `Sorry, that didn't work: ${c.replace(/^Error(?: \([^)]*\))?: /, '')}`;
      try {
        return sentenceFor(JSON.parse(c));
      } catch {
        return c;
      }
    })
    .join(' ');
}

function helpText(tools: ToolSpec[]): string {
  if (tools.length === 0) return "Hi! I'm the support assistant. I can't look anything up right now, but tell me what you need and we'll get back to you.";
  const list = tools.map((t) => (t.description || humanize(t.name)).replace(/\.$/, '').toLowerCase());
  return `I can help you ${list.length > 1 ? `${list.slice(0, -1).join(', ')} or ${list.at(-1)}` : list[0]}. What would you like to do?`;
}

/** Rule-based verdict over the transcript text written by src/daemon/transcript.ts. */
export function reflect(transcript: string): { verdict: 'resolved' | 'unresolved' | 'unclear'; summary: string; followup?: string } {
  const lines = transcript.split('\n').filter((l) => l && l !== TRANSCRIPT_HEADER);
  const talk = lines.filter((l) => !l.startsWith('confirmation '));
  const last = talk.at(-1);
  if (!last) return { verdict: 'unclear', summary: 'The conversation is empty.' };
  const lastTool = [...talk].reverse().find((l) => l.startsWith('tool '));
  if (last.startsWith('customer:')) {
    return {
      verdict: 'unresolved',
      summary: "The customer's last message went unanswered.",
      followup: "Hi! Sorry we didn't get back to you on your last message. Reply here and we'll pick it up right away.",
    };
  }
  if (lastTool && /: failed/.test(lastTool)) {
    return {
      verdict: 'unresolved',
      summary: `The last action failed (${lastTool.replace(/^tool /, '')}).`,
      followup: "Hi! Following up: something went wrong with your last request and it wasn't completed. Reply here and we'll try again.",
    };
  }
  if (lastTool && / ok$/.test(lastTool) && last.startsWith('assistant')) {
    return { verdict: 'resolved', summary: 'The request was handled and answered.' };
  }
  return { verdict: 'unclear', summary: 'No clear outcome.' };
}

const PERSON = /\b(human|humans|person|people|agent|agents|operator|representative|someone real|real person)\b/i;

/** "I want to talk to a person", "can I speak to an agent?", "operator please": the offline model hands over. */
export const asksForPerson = (text: string) => PERSON.test(text);

const tokens = (messages: ChatMessage[]) => Math.ceil(messages.reduce((n, m) => n + (m.content?.length ?? 0), 0) / 4);

/** Splits text into pieces of `perPiece` words each (with their spaces); joined, they are the text. */
export function wordPieces(text: string, perPiece: number): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += perPiece) pieces.push(words.slice(i, i + perPiece).join(''));
  return pieces;
}

export interface OfflineStreaming {
  /** Pause between two pieces of a streamed reply (0: all pieces at once). */
  delayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const WORDS_PER_PIECE = 3;

export function createOfflineProvider(model = 'offline-1', streaming: OfflineStreaming = {}): LlmProvider {
  let callSeq = 0;
  const delayMs = streaming.delayMs ?? 0;
  const sleep = streaming.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  const answer = (req: LlmRequest): { text: string | null; toolCalls: LlmResponse['toolCalls'] } => {
    const say = (text: string) => ({ text, toolCalls: [] });
    if (req.purpose === 'reflection') {
      const transcript = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      return say(JSON.stringify(reflect(transcript)));
    }
    const trailingTools: Extract<ChatMessage, { role: 'tool' }>[] = [];
    for (let i = req.messages.length - 1; i >= 0 && req.messages[i].role === 'tool'; i--)
      trailingTools.unshift(req.messages[i] as Extract<ChatMessage, { role: 'tool' }>);
    const searched = trailingTools.find((t) => t.name === KNOWLEDGE_TOOL);
    if (searched) return say(answerFromKnowledge(searched.content));
    if (trailingTools.length) return say(answerFromToolResults(trailingTools));

    const lastUser = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const canHandOff = req.tools.some((t) => t.name === 'handoff');
    if (canHandOff && (asksForPerson(lastUser) || acceptsPerson(req.messages)))
      return { text: null, toolCalls: [{ id: `call_${++callSeq}`, name: 'handoff', args: { reason: 'The customer asked for a person' } }] };
    // The built-in tools are chosen only by their own rules, and are not among the things it offers to help with.
    const tools = req.tools.filter((t) => t.name !== 'handoff' && t.name !== KNOWLEDGE_TOOL);
    const tool = chooseTool(lastUser, tools);
    if (!tool && wantsKnowledge(lastUser, req.tools, keywords(lastUser).size))
      return { text: null, toolCalls: [{ id: `call_${++callSeq}`, name: KNOWLEDGE_TOOL, args: { query: lastUser } }] };
    if (!tool) return say(helpText(tools));
    const { args, missing } = fillArguments(lastUser, tool.parameters);
    if (missing.length)
      return say(
        `To ${(tool.description || humanize(tool.name)).replace(/\.$/, '').toLowerCase()}, I need ${missing.map(humanize).join(' and ')}. Could you tell me?`,
      );
    return { text: null, toolCalls: [{ id: `call_${++callSeq}`, name: tool.name, args }] };
  };

  return {
    name: 'offline',
    model,
    async complete(req: LlmRequest): Promise<LlmResponse> {
      const started = performance.now();
      const { text, toolCalls } = answer(req);
      // A few words per piece, so the widget shows the reply being written (and the demo shows streaming).
      if (text && req.onText) {
        for (const [i, piece] of wordPieces(text, WORDS_PER_PIECE).entries()) {
          if (i > 0 && delayMs > 0) await sleep(delayMs);
          if (req.signal?.aborted) throw new LlmError('aborted', 'The call was cancelled', 'offline');
          req.onText(piece);
        }
      }
      return {
        text,
        toolCalls,
        usage: { promptTokens: tokens(req.messages), completionTokens: Math.ceil((text?.length ?? 30) / 4) },
        provider: 'offline',
        model,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      };
    },
  };
}
