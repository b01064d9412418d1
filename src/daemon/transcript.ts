// The text form of a conversation the reflection LLM reads. The offline
// provider parses the same form, so keep the line prefixes stable.
import type { MessageRecord } from '../conversations/history.ts';
import { TRANSCRIPT_HEADER } from '../llm/types.ts';

export function renderTranscript(records: MessageRecord[]): string {
  const lines = records.map((r) => {
    switch (r.role) {
      case 'user':
        return `customer: ${r.text}`;
      case 'assistant':
        return `assistant${r.proactive ? ' (proactive)' : ''}: ${r.text}`;
      case 'tool': {
        const data = (r.data ?? {}) as { name?: string; ok?: boolean; phase?: string; args?: unknown };
        const name = data.name ?? '?';
        // Each call is stored twice: when invoked (with its args), then with its outcome.
        if (data.phase === 'invoked') return `tool ${name} called${data.args === undefined ? '' : ` with ${JSON.stringify(data.args).slice(0, 200)}`}`;
        return `tool ${name}: ${data.ok ? 'ok' : `failed${r.text ? ` — ${r.text}` : ''}`}`;
      }
      case 'confirmation':
        return `confirmation ${(r.data as { name?: string } | undefined)?.name ?? ''}: ${(r.data as { outcome?: string } | undefined)?.outcome ?? r.text}`;
      default:
        return `${r.role}: ${r.text}`;
    }
  });
  return `${TRANSCRIPT_HEADER}\n${lines.join('\n')}`;
}

export const REFLECTION_PROMPT =
  "You review a customer support conversation that has gone quiet. Decide whether the customer's need was met. " +
  'Answer with JSON only: {"verdict": "resolved" | "unresolved" | "unclear", "summary": "<one sentence>", ' +
  '"followup": "<a short, friendly message to send the customer if unresolved>"}.';
