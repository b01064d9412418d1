// A local OpenAI-compatible endpoint for tests: POST /v1/chat/completions
// answers from a script (a queue of responses, or functions of the request).
// A request with `stream: true` is answered as the real API does, with
// server-sent events: a role chunk, the text in pieces, each tool call's id and
// name then its arguments split across several chunks, a finish chunk, the
// usage in a last chunk without choices (`stream_options.include_usage`), and
// `data: [DONE]`. Faults: a connection cut half-way, an SSE error event, a
// stream that stops sending.
import Fastify from 'fastify';
import type { ServerResponse } from 'node:http';
import type { ToolSpec } from '../../src/llm/types.ts';

export interface ScriptedResponse {
  text?: string | null;
  toolCalls?: { name: string; args: unknown }[];
  /** Sent verbatim as `function.arguments` (e.g. malformed JSON). */
  rawArguments?: string;
  status?: number;
  /** With an error `status`: the body's `error.message`, as OpenAI words it (e.g. "Incorrect API key provided: sk-…"). */
  errorMessage?: string;
  /** Before anything is answered (the model "thinking"). */
  delayMs?: number;
  // Streamed answers only:
  /** The text in exactly these pieces (default: one word per piece). */
  chunks?: string[];
  /** Pause before each piece of text or arguments. */
  chunkDelayMs?: number;
  /** How many chunks each call's arguments are split into (default 3). */
  argumentPieces?: number;
  /** After this many text/argument chunks, cut the connection. */
  cutAfterChunks?: number;
  /** After this many text/argument chunks, send an SSE error event and end. */
  errorAfterChunks?: number;
  /** After this many text/argument chunks, send nothing more (until the client gives up). */
  stallAfterChunks?: number;
  /** After this many text/argument chunks, end the response cleanly, without saying why the answer stopped. */
  endAfterChunks?: number;
  /** Leave out the finish_reason and the usage chunk, as some compatible servers do. */
  terse?: boolean;
  /** Answer with one JSON completion even when a stream was asked for, as some compatible servers do. */
  ignoreStream?: boolean;
  /** The usage reported (default: 11 prompt tokens per message, 7 completion tokens); `cached` becomes `prompt_tokens_details.cached_tokens`. */
  usage?: { prompt: number; completion: number; cached?: number };
  /** The model name the chunks carry (default: the one asked for). */
  model?: string;
  /** Called when the first text chunk is written (benchmarks time the model's first token). */
  onFirstText?: () => void;
}

/** The tool the provider tests offer the fake model (its answers call it by this name). */
export const ORDER_STATUS_TOOL: ToolSpec = {
  name: 'getOrderStatus',
  description: 'Get the status of an order',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};

export type ScriptStep = ScriptedResponse | ((body: any) => ScriptedResponse);

export interface FakeOpenAi {
  url: string;
  requests: any[];
  script(...steps: ScriptStep[]): void;
  /** Used when the script queue is empty. */
  fallback(step: ScriptStep): void;
  close(): Promise<void>;
}

/** "Hello there, friend" → ["Hello", " there,", " friend"]: joined, exactly the text. */
export function wordChunks(text: string): string[] {
  const pieces: string[] = text.match(/\s*\S+/g) ?? [];
  const rest = text.slice(pieces.join('').length);
  if (rest) pieces.push(rest);
  return pieces;
}

function splitInto(s: string, n: number): string[] {
  if (n <= 1 || s.length <= 1) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });
  const requests: any[] = [];
  const queue: ScriptStep[] = [];
  let fallback: ScriptStep = { text: 'OK.' };
  let seq = 0;
  const pendingDelays = new Set<() => void>();
  const streams = new Set<ServerResponse>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(t);
        pendingDelays.delete(finish);
        resolve();
      };
      const t = setTimeout(finish, ms);
      pendingDelays.add(finish);
    });

  const usageFor = (body: any, r?: ScriptedResponse) =>
    r?.usage
      ? {
          prompt_tokens: r.usage.prompt,
          completion_tokens: r.usage.completion,
          total_tokens: r.usage.prompt + r.usage.completion,
          ...(r.usage.cached !== undefined ? { prompt_tokens_details: { cached_tokens: r.usage.cached } } : {}),
        }
      : {
          prompt_tokens: 11 * (body.messages?.length ?? 1),
          completion_tokens: 7,
          total_tokens: 11 * (body.messages?.length ?? 1) + 7,
        };

  const stream = async (res: ServerResponse, body: any, r: ScriptedResponse, toolCalls: { id: string; name: string; arguments: string }[]) => {
    streams.add(res);
    res.on('close', () => streams.delete(res));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const id = `chatcmpl-${++seq}`;
    const model = r.model ?? body.model;
    const created = Math.floor(Date.now() / 1000);
    const send = (payload: Record<string, unknown>) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      send({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] });

    // Every text or argument piece, in order; the faults count these.
    const pieces: { delta: Record<string, unknown>; text?: boolean }[] = [];
    for (const piece of r.text ? (r.chunks ?? wordChunks(r.text)) : []) pieces.push({ delta: { content: piece }, text: true });
    toolCalls.forEach((c, index) => {
      pieces.push({ delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] } });
      for (const a of splitInto(c.arguments, r.argumentPieces ?? 3)) pieces.push({ delta: { tool_calls: [{ index, function: { arguments: a } }] } });
    });

    chunk({ role: 'assistant', content: '' });
    let sentText = false;
    for (const [i, p] of pieces.entries()) {
      if (i === r.cutAfterChunks) {
        // What was written reaches the client first (destroying at once would discard it).
        await sleep(Math.max(20, r.chunkDelayMs ?? 0));
        return void res.destroy();
      }
      if (i === r.errorAfterChunks) {
        send({ error: { message: 'scripted stream error', type: 'server_error', code: null } });
        return void res.end();
      }
      if (i === r.stallAfterChunks) return;
      if (i === r.endAfterChunks) return void res.end();
      if (r.chunkDelayMs) await sleep(r.chunkDelayMs);
      if (res.destroyed) return;
      chunk(p.delta);
      if (p.text && !sentText) {
        sentText = true;
        r.onFirstText?.();
      }
    }
    if (r.terse) return void res.end('data: [DONE]\n\n');
    chunk({}, toolCalls.length ? 'tool_calls' : 'stop');
    if (body.stream_options?.include_usage) send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageFor(body, r) });
    res.end('data: [DONE]\n\n');
  };

  app.post('/v1/chat/completions', async (request, reply) => {
    const body = request.body as any;
    requests.push(body);
    const step = queue.length ? queue.shift()! : fallback;
    const r = typeof step === 'function' ? step(body) : step;
    if (r.delayMs) await sleep(r.delayMs);
    if (r.status && r.status >= 400) {
      return reply.code(r.status).send({ error: { message: r.errorMessage ?? `scripted ${r.status}`, type: 'server_error', code: null } });
    }
    const toolCalls = (r.toolCalls ?? []).map((c, i) => ({
      id: `call_${++seq}_${i}`,
      name: c.name,
      arguments: r.rawArguments ?? JSON.stringify(c.args ?? {}),
    }));
    if (body.stream === true && !r.ignoreStream) {
      reply.hijack();
      await stream(reply.raw, body, r, toolCalls);
      return reply;
    }
    return {
      id: `chatcmpl-${++seq}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: r.model ?? body.model,
      choices: [
        {
          index: 0,
          finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
          message: {
            role: 'assistant',
            content: r.text ?? null,
            ...(toolCalls.length
              ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
              : {}),
          },
        },
      ],
      usage: usageFor(body, r),
    };
  });

  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `${address}/v1`,
    requests,
    script: (...steps) => void queue.push(...steps),
    fallback: (step) => void (fallback = step),
    async close() {
      for (const res of [...streams]) res.destroy();
      for (const finish of [...pendingDelays]) finish();
      await app.close();
    },
  };
}
