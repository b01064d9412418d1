// Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM…)
// through the official `openai` client, with our timeout and retry settings
// (its defaults are 10 minutes and 2 retries). Always streamed: the reply's
// text is handed to `onText` as it arrives (see openai-stream.ts).
import OpenAI from 'openai';
import { createChunkAssembler } from './openai-stream.ts';
import { LlmError, type ChatMessage, type LlmProvider, type LlmRequest, type LlmResponse } from './types.ts';

export interface OpenAiOptions {
  model: string;
  baseUrl?: string;
  apiKey?: string;
  timeoutMs: number;
  maxRetries: number;
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
function providerMessage(err: InstanceType<typeof OpenAI.APIError>, apiKey: string | undefined): string {
  const body = err.error as { message?: unknown } | undefined;
  const said = typeof body?.message === 'string' && body.message ? body.message : err.message.replace(/^\d{3}\s*/, '');
  const own = apiKey && apiKey.length >= 8 ? said.split(apiKey).join('[redacted]') : said;
  return own.length > 500 ? `${own.slice(0, 500)}…` : own;
}

function toLlmError(err: unknown, provider: string, apiKey?: string): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new LlmError('timeout', 'The model did not answer in time', provider);
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const said = providerMessage(err, apiKey);
    return new LlmError(`http_${err.status}`, `The model endpoint answered HTTP ${err.status}${said ? `: ${said}` : ''}`, provider);
  }
  if (err instanceof OpenAI.APIConnectionError) return new LlmError('provider_error', 'Cannot reach the model endpoint', provider);
  return new LlmError('provider_error', (err as Error)?.message ?? String(err), provider);
}

export function createOpenAiProvider(o: OpenAiOptions): LlmProvider {
  // The client's own timeout ends when the response headers arrive; a streamed answer is bounded as a
  // whole by the deadline below, like an unstreamed one is.
  const client = new OpenAI({ baseURL: o.baseUrl, apiKey: o.apiKey || 'none', timeout: o.timeoutMs, maxRetries: o.maxRetries });
  const name = 'openai';
  return {
    name,
    model: o.model,
    async complete(req: LlmRequest): Promise<LlmResponse> {
      if (req.signal?.aborted) throw new LlmError('aborted', 'The call was cancelled', name);
      const started = performance.now();
      const abort = new AbortController();
      let timedOut = false;
      const deadline = setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, o.timeoutMs);
      const cancel = () => abort.abort();
      req.signal?.addEventListener('abort', cancel, { once: true });
      const assembler = createChunkAssembler(req.onText);
      let chunks = 0;
      try {
        const { data: stream, response } = await client.chat.completions
          .create(
            {
              model: o.model,
              messages: req.messages.map(toWire),
              stream: true,
              stream_options: { include_usage: true },
              ...(req.tools.length
                ? {
                    tools: req.tools.map((t) => ({
                      type: 'function' as const,
                      function: { name: t.name, description: t.description, parameters: t.parameters },
                    })),
                    tool_choice: 'auto' as const,
                  }
                : {}),
              ...(req.responseFormat === 'json' ? { response_format: { type: 'json_object' as const } } : {}),
              ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
            },
            { signal: abort.signal },
          )
          .withResponse();
        // A compatible server that ignores `stream` answers with one JSON completion: read it whole.
        if (!/text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
          assembler.addCompletion((await response.json()) as OpenAI.Chat.Completions.ChatCompletion);
        } else {
          for await (const chunk of stream) {
            chunks++;
            assembler.add(chunk);
          }
        }
        // An aborted stream ends its loop quietly.
        if (abort.signal.aborted) throw new Error('aborted');
      } catch (err) {
        if (timedOut) throw new LlmError('timeout', 'The model did not answer in time', name);
        if (req.signal?.aborted) throw new LlmError('aborted', 'The call was cancelled', name);
        if (chunks > 0 && !(err instanceof OpenAI.APIError))
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
        let args: unknown;
        try {
          args = call.arguments ? JSON.parse(call.arguments) : {};
        } catch {
          throw new LlmError('malformed_tool_call', `The model sent arguments for ${call.name} that are not JSON`, name);
        }
        toolCalls.push({ id: call.id || `call_${toolCalls.length + 1}`, name: call.name, args });
      }
      return {
        text: answer.text,
        toolCalls,
        usage: answer.usage ?? { promptTokens: 0, completionTokens: 0 },
        provider: name,
        model: answer.model || o.model,
        durationMs: Math.round(performance.now() - started),
      };
    },
  };
}
