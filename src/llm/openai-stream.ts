// Folds the chunks of a streamed chat completion into one answer. Text pieces
// are handed on as they arrive; tool calls are assembled by their `index` (the
// id and name come in a call's first delta, the arguments in pieces across
// many chunks, several calls may be interleaved); usage comes in the last
// chunk (`stream_options.include_usage`), with no choices. A server that
// ignores `stream` and answers with one whole completion is folded the same way.
//
// Not the SDK's `chat.completions.stream()` runner: it rejects streams from
// compatible servers that leave out `role`, and this is all the folding needed.
import type OpenAI from 'openai';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

export interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

export interface AssembledCompletion {
  text: string | null;
  calls: AssembledCall[];
  usage?: { promptTokens: number; completionTokens: number; cachedPromptTokens?: number };
  model?: string;
  /** A choice said why it stopped: the stream was not cut short. */
  finished: boolean;
}

/** OpenAI's usage, with the cached part of the prompt (`prompt_tokens_details.cached_tokens`) where the server gives it. */
function usageOf(u: NonNullable<Chunk['usage']>): NonNullable<AssembledCompletion['usage']> {
  const out: NonNullable<AssembledCompletion['usage']> = { promptTokens: u.prompt_tokens ?? 0, completionTokens: u.completion_tokens ?? 0 };
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number' && Number.isFinite(cached) && cached > 0) out.cachedPromptTokens = Math.min(cached, out.promptTokens);
  return out;
}

export function createChunkAssembler(onText?: (text: string) => void) {
  let text: string | null = null;
  const calls = new Map<number, AssembledCall>();
  let lastIndex = -1;
  let usage: AssembledCompletion['usage'];
  let model: string | undefined;
  let finished = false;

  const addCall = (d: NonNullable<Chunk['choices'][number]['delta']['tool_calls']>[number]) => {
    // `index` is required by the API; a server that leaves it out gets one call per new id.
    const last = calls.get(lastIndex);
    const index = typeof d.index === 'number' ? d.index : d.id && last && d.id !== last.id ? lastIndex + 1 : Math.max(0, lastIndex);
    let call = calls.get(index);
    if (!call) calls.set(index, (call = { id: '', name: '', arguments: '' }));
    lastIndex = index;
    if (d.id) call.id = d.id;
    if (d.function?.name) call.name = d.function.name;
    if (d.function?.arguments) call.arguments += d.function.arguments;
  };

  const add = (chunk: Chunk) => {
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = usageOf(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const piece = choice.delta?.content;
    if (typeof piece === 'string' && piece.length > 0) {
      text = (text ?? '') + piece;
      onText?.(piece);
    }
    for (const d of choice.delta?.tool_calls ?? []) addCall(d);
    if (choice.finish_reason) finished = true;
  };

  return {
    add,
    /** A whole (unstreamed) completion, folded as if it were one chunk. */
    addCompletion(c: OpenAI.Chat.Completions.ChatCompletion) {
      const choice = c.choices?.[0];
      const message = choice?.message;
      const toolCalls = (message?.tool_calls ?? []).flatMap((t, index) =>
        t.type === 'function' ? [{ index, id: t.id, type: 'function' as const, function: t.function }] : [],
      );
      add({
        id: c.id,
        object: 'chat.completion.chunk',
        created: c.created,
        model: c.model,
        usage: c.usage,
        choices: choice
          ? [{ index: 0, delta: { content: message?.content ?? null, tool_calls: toolCalls }, finish_reason: choice.finish_reason ?? 'stop' }]
          : [],
      });
    },
    result(): AssembledCompletion {
      const ordered = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
      return { text, calls: ordered, usage, model, finished };
    },
  };
}
