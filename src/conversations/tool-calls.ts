// Tool calls with their arguments, read from a conversation's stored history (for `parley test`: an embedded Parley's
// store, a running one's test-mode route, or a store opened for `parley test export`): each `tool` record's `invoked`
// entry, completed by its result or failure.
import type { HistoryStore } from '../store/repos.ts';
import type { MessageRecord } from '../store/model.ts';

export interface ToolCall {
  name: string;
  args?: Record<string, unknown>;
  /** undefined: not known (a running Parley's telemetry) or not finished. */
  ok?: boolean;
  error?: string;
}

export async function storedHistory(history: HistoryStore, conversationId: string): Promise<MessageRecord[]> {
  const out: MessageRecord[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await history.page(conversationId, { before, limit: 500 });
    out.unshift(...page.map((p) => p.record));
    if (page.length < 500) return out;
    before = page[0].seq;
  }
}

export function toolCallsOf(records: MessageRecord[]): ToolCall[] {
  const byCall = new Map<string, ToolCall>();
  const calls: ToolCall[] = [];
  for (const r of records) {
    if (r.role !== 'tool' || !r.data) continue;
    const callId = r.id.slice(0, r.id.lastIndexOf(':'));
    if (r.data.phase === 'invoked') {
      const call: ToolCall = { name: String(r.data.name), args: (r.data.args ?? {}) as Record<string, unknown> };
      byCall.set(callId, call);
      calls.push(call);
    } else {
      const call = byCall.get(callId);
      if (!call) continue;
      call.ok = r.data.ok === true;
      if (r.data.error !== undefined || !call.ok) call.error = String(r.data.content ?? r.data.error ?? '');
    }
  }
  return calls;
}
