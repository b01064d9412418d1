// One chat completions call over HTTP, without the `openai` client: a POST through undici's `request` (its answer read
// as a Node stream, no web streams, no per-request client machinery), the server-sent events parsed as they arrive and
// handed on one JSON chunk at a time. Measured in bench/peer.ts: the official client spent about a quarter of a
// turn's CPU (request building, fetch, web streams, its SSE decoder); see BENCHMARKS.md. The wire is the same (the
// `openai` package's types describe it); the conversation tests' model client still uses the package itself.
import type OpenAI from 'openai';
import { request } from 'undici';

export type ChatChunk = OpenAI.Chat.Completions.ChatCompletionChunk;
export type ChatCompletion = OpenAI.Chat.Completions.ChatCompletion;

/** The endpoint answered with an HTTP error status; `said` is its own message (`{error: {message}}`), whole. */
export class ChatStatusError extends Error {
  override name = 'ChatStatusError';
  constructor(
    readonly status: number,
    readonly said: string,
  ) {
    super(`${status} ${said}`);
  }
}

/** No response at all: the endpoint could not be reached (refused, reset, unresolvable) before any header came. */
export class ChatConnectionError extends Error {
  override name = 'ChatConnectionError';
}

/** An error event inside the stream (`data: {"error": {...}}`, or `event: error`). */
export class ChatStreamError extends Error {
  override name = 'ChatStreamError';
}

export interface ChatCall {
  url: string;
  apiKey: string;
  body: unknown;
  signal: AbortSignal;
  /** Each streamed chunk, in order. */
  onChunk(chunk: ChatChunk): void;
  /** A server that ignores `stream` answers with one whole completion. */
  onCompletion(completion: ChatCompletion): void;
}

/** What the error body says, as OpenAI words it: `error.message`, else the error object, else the raw text. */
function saidIn(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text || 'status code (no body)';
  }
  const error = (parsed as { error?: unknown } | null)?.error;
  const message = (error as { message?: unknown } | null | undefined)?.message;
  if (typeof message === 'string' && message) return message;
  if (message !== undefined && message !== null) return JSON.stringify(message);
  return error !== undefined && error !== null ? JSON.stringify(error) : text;
}

/** Resolves once the answer has been read whole (every chunk handed on); rejects with one of the errors above or the socket's. */
export async function postChatCompletion(call: ChatCall): Promise<void> {
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(call.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${call.apiKey}`, 'user-agent': 'parley' },
      body: JSON.stringify(call.body),
      signal: call.signal,
    });
  } catch (err) {
    if (call.signal.aborted) throw err;
    throw new ChatConnectionError((err as Error)?.message ?? String(err), { cause: err });
  }
  if (res.statusCode >= 400) throw new ChatStatusError(res.statusCode, saidIn(await res.body.text()));
  const type = res.headers['content-type'];
  if (!/text\/event-stream/i.test(Array.isArray(type) ? type.join(',') : (type ?? ''))) {
    call.onCompletion((await res.body.json()) as ChatCompletion);
    return;
  }
  const events = createSseParser((event, data) => {
    if (data === '[DONE]') return;
    const parsed = JSON.parse(data) as ChatChunk & { error?: { message?: unknown } };
    if (event === 'error' || parsed?.error) throw new ChatStreamError(streamErrorMessage(parsed?.error ?? parsed));
    call.onChunk(parsed);
  });
  res.body.setEncoding('utf8');
  for await (const piece of res.body as AsyncIterable<string>) events.push(piece);
  events.end();
}

function streamErrorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message ? message : JSON.stringify(error);
}

/**
 * Server-sent events (the subset chat completions use): `data:` lines joined by newlines, an optional `event:` name,
 * comments and other fields ignored, an event dispatched at its blank line (or at the end of the stream).
 */
export function createSseParser(dispatch: (event: string | undefined, data: string) => void) {
  let buffered = '';
  let data: string | undefined;
  let event: string | undefined;
  const flush = () => {
    if (data !== undefined) dispatch(event, data);
    data = undefined;
    event = undefined;
  };
  const line = (text: string) => {
    if (text === '') return flush();
    if (text.charCodeAt(0) === 58 /* ':' */) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* ' ' */) value = value.slice(1);
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'event') event = value;
  };
  return {
    push(piece: string) {
      buffered += piece;
      let start = 0;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n', start)) {
        const end = nl > start && buffered.charCodeAt(nl - 1) === 13 /* '\r' */ ? nl - 1 : nl;
        line(buffered.slice(start, end));
        start = nl + 1;
      }
      buffered = buffered.slice(start);
    },
    end() {
      if (buffered) line(buffered);
      buffered = '';
      flush();
    },
  };
}
