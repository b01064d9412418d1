// The LLM layer's one interface. Providers: `offline` (deterministic, no
// network) and `openai` (any OpenAI-compatible endpoint).
/**
 * The first line of a conversation's text form (src/daemon/transcript.ts writes it for the reflection prompt); the
 * offline provider recognises and parses that form, so the line prefixes stay stable.
 */
export const TRANSCRIPT_HEADER = 'Conversation transcript:';

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: { id: string; name: string; args: unknown }[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface LlmRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  purpose: 'chat' | 'reflection';
  signal?: AbortSignal;
  responseFormat?: 'json';
  /**
   * Called with each new piece of the reply's text as the model writes it. A provider that fails
   * after calling it has shown text that will never be final: the caller decides what to do with it.
   */
  onText?: (text: string) => void;
}

export interface LlmResponse {
  text: string | null;
  toolCalls: { id: string; name: string; args: unknown }[];
  /** `promptTokens` counts every prompt token; `cachedPromptTokens` (when the provider says) is the part of them it read from its prompt cache. */
  usage: { promptTokens: number; completionTokens: number; cachedPromptTokens?: number };
  provider: string;
  model: string;
  durationMs: number;
}

export interface LlmProvider {
  readonly name: string;
  readonly model: string;
  complete(req: LlmRequest): Promise<LlmResponse>;
}

export type LlmErrorCode = 'timeout' | 'malformed_tool_call' | 'provider_error' | 'aborted' | `http_${number}`;

export class LlmError extends Error {
  override name = 'LlmError';
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    readonly provider: string,
  ) {
    super(message);
  }

  get retryable(): boolean {
    if (this.code === 'aborted') return false;
    if (this.code === 'timeout' || this.code === 'malformed_tool_call' || this.code === 'provider_error') return true;
    const status = Number(this.code.slice(5));
    return status === 429 || status >= 500;
  }
}
