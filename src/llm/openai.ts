// Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM…)
// through the official `openai` client, with our timeout and retry settings
// (its defaults are 10 minutes and 2 retries).
import OpenAI from 'openai';
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
  const client = new OpenAI({ baseURL: o.baseUrl, apiKey: o.apiKey || 'none', timeout: o.timeoutMs, maxRetries: o.maxRetries });
  const name = 'openai';
  return {
    name,
    model: o.model,
    async complete(req: LlmRequest): Promise<LlmResponse> {
      const started = performance.now();
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client.chat.completions.create(
          {
            model: o.model,
            messages: req.messages.map(toWire),
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
          { signal: req.signal },
        );
      } catch (err) {
        throw toLlmError(err, name, o.apiKey);
      }
      const choice = completion.choices?.[0];
      if (!choice?.message) throw new LlmError('provider_error', 'The model answered without a message', name);
      const toolCalls: LlmResponse['toolCalls'] = [];
      for (const call of choice.message.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        let args: unknown;
        try {
          args = call.function.arguments ? JSON.parse(call.function.arguments) : {};
        } catch {
          throw new LlmError('malformed_tool_call', `The model sent arguments for ${call.function.name} that are not JSON`, name);
        }
        if (!call.function.name) throw new LlmError('malformed_tool_call', 'The model sent a tool call without a name', name);
        toolCalls.push({ id: call.id, name: call.function.name, args });
      }
      return {
        text: choice.message.content ?? null,
        toolCalls,
        usage: { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 },
        provider: name,
        model: completion.model || o.model,
        durationMs: Math.round(performance.now() - started),
      };
    },
  };
}
