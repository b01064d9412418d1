// Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM…), spoken over HTTP by openai-http.ts
// (the official client's wire, without its cost per call), with our timeout; retries are the resilient wrapper's.
// Always streamed: the reply's text is handed to `onText` as it arrives (see openai-stream.ts).
import type OpenAI from 'openai';
import { storableJsonText, storableText } from '../http/storable-text.ts';
import { ChatConnectionError, ChatStatusError, postChatCompletion } from './openai-http.ts';
import { createChunkAssembler } from './openai-stream.ts';
import { LlmError, type ChatMessage, type LlmProvider, type LlmRequest, type LlmResponse } from './types.ts';

export interface OpenAiOptions {
  model: string;
  baseUrl?: string;
  apiKey?: string;
  timeoutMs: number;
  temperature?: number;
}

type WireMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

function toWire(m: ChatMessage): WireMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  }
}

/** What the endpoint itself said (`{error: {message}}`, as OpenAI and compatible servers answer), cut, without our own key. */
function providerMessage(said: string, apiKey: string | undefined): string {
  const own = apiKey && apiKey.length >= 8 ? said.split(apiKey).join('[redacted]') : said;
  return storableText(own.length > 500 ? `${own.slice(0, 500)}…` : own);
}

function toLlmError(err: unknown, provider: string, apiKey?: string): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof ChatStatusError) {
    const said = providerMessage(err.said, apiKey);
    return new LlmError(`http_${err.status}`, `The model endpoint answered HTTP ${err.status}${said ? `: ${said}` : ''}`, provider);
  }
  if (err instanceof ChatConnectionError) return new LlmError('provider_error', 'Cannot reach the model endpoint', provider);
  return new LlmError('provider_error', (err as Error)?.message ?? String(err), provider);
}

/** The request body: always streamed, usage asked for, tools offered only when there are some. */
function requestBody(o: OpenAiOptions, req: LlmRequest): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming = {
    model: o.model,
    messages: req.messages.map(toWire),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (req.tools.length) {
    body.tools = req.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } }));
    body.tool_choice = 'auto';
  }
  if (req.responseFormat === 'json') body.response_format = { type: 'json_object' };
  if (o.temperature !== undefined) body.temperature = o.temperature;
  return body;
}

/**
 * The model's text with U+FFFD for any NUL; a JSON answer (a verdict, a rating) also with `\ufffd` for a `\u0000` it
 * spells, which would be a NUL once parsed.
 */
const storableReply = (text: string, format: LlmRequest['responseFormat']) => (format === 'json' ? storableJsonText(storableText(text)) : storableText(text));

/** `https://host/v1` + `/chat/completions` (OpenAI's default base when none is configured). */
const completionsUrl = (baseUrl: string | undefined) => `${(baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '')}/chat/completions`;

export function createOpenAiProvider(o: OpenAiOptions): LlmProvider {
  const name = 'openai';
  const url = completionsUrl(o.baseUrl);
  return {
    name,
    model: o.model,
    async complete(req: LlmRequest): Promise<LlmResponse> {
      if (req.signal?.aborted) throw new LlmError('aborted', 'The call was cancelled', name);
      const started = performance.now();
      const abort = new AbortController();
      let timedOut = false;
      // The whole answer, streamed or not, is bounded by one deadline.
      const deadline = setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, o.timeoutMs);
      const cancel = () => abort.abort();
      req.signal?.addEventListener('abort', cancel, { once: true });
      // Text from the model is kept even when it holds NUL: U+FFFD in its place, in the deltas as in the answer.
      const onText = req.onText;
      const assembler = createChunkAssembler(onText && ((piece) => onText(storableText(piece))));
      let chunks = 0;
      try {
        await postChatCompletion({
          url,
          apiKey: o.apiKey || 'none',
          body: requestBody(o, req),
          signal: abort.signal,
          onChunk: (chunk) => {
            chunks++;
            assembler.add(chunk);
          },
          onCompletion: (completion) => assembler.addCompletion(completion),
        });
        // Cancelled or timed out just as the answer ended: still not an answer (sorted out below, as mid-stream).
        if (abort.signal.aborted) throw new Error('aborted');
      } catch (err) {
        if (timedOut) throw new LlmError('timeout', 'The model did not answer in time', name);
        if (req.signal?.aborted) throw new LlmError('aborted', 'The call was cancelled', name);
        if (chunks > 0 && !(err instanceof ChatStatusError))
          throw new LlmError('provider_error', `The model's stream broke off after ${chunks} chunks (${(err as Error)?.message ?? err})`, name);
        throw toLlmError(err, name, o.apiKey);
      } finally {
        clearTimeout(deadline);
        req.signal?.removeEventListener('abort', cancel);
      }
      const answer = assembler.result();
      // A broken connection fails above (the HTTP response is cut). A response the server ended properly is the
      // answer even without a finish_reason (some compatible servers leave it out), unless it held nothing at all.
      if (!answer.finished && answer.text === null && answer.calls.length === 0)
        throw new LlmError('provider_error', 'The model stream ended without an answer', name);
      const toolCalls: LlmResponse['toolCalls'] = [];
      for (const call of answer.calls) {
        if (!call.name) throw new LlmError('malformed_tool_call', 'The model sent a tool call without a name', name);
        const callName = storableText(call.name);
        let args: unknown;
        try {
          args = call.arguments ? JSON.parse(storableJsonText(call.arguments)) : {};
        } catch {
          throw new LlmError('malformed_tool_call', `The model sent arguments for ${callName} that are not JSON`, name);
        }
        toolCalls.push({ id: storableText(call.id) || `call_${toolCalls.length + 1}`, name: callName, args });
      }
      return {
        text: answer.text === null ? null : storableReply(answer.text, req.responseFormat),
        toolCalls,
        usage: answer.usage ?? { promptTokens: 0, completionTokens: 0 },
        provider: name,
        model: storableText(answer.model || o.model),
        durationMs: Math.round(performance.now() - started),
      };
    },
  };
}
