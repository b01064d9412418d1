// The peer of bench/peer.ts, in its own process (so its CPU is measured alone): the OpenAI Agents SDK JS running the
// same turn as Parley — the customer's message, a streamed model call that asks for getOrderStatus, the tool (here
// in-process, a plain function: the peer's advantage), a second streamed model call that answers — with its history
// in the simplest durable session: the SDK ships only an in-memory session and one kept on OpenAI's servers, so this
// is its `Session` interface on LMDB (one key per item; `addItems` resolves once the items are committed and
// flushed, the rule Parley's store follows before it acknowledges). Each block runs CONVERSATIONS conversations in a
// closed loop (a turn, then the next) for the block's length, driven from inside this process.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool, type AgentInputItem, type Session } from '@openai/agents';
import { open, type RootDatabase } from 'lmdb';
import OpenAI from 'openai';
import { z } from 'zod';
import { tempDir } from '../test/support/tmp.ts';

/** The Agents SDK's `Session` on LMDB: items under [sessionId, seq], `addItems` durable before it resolves. */
class LmdbSession implements Session {
  private seq = 0;
  constructor(
    private readonly root: RootDatabase<AgentInputItem, [string, number]>,
    private readonly id: string,
  ) {}
  async getSessionId() {
    return this.id;
  }
  /** The last `limit` items (default HISTORY_WINDOW, Parley's default `history_window`), from a customer message on. */
  async getItems(limit = HISTORY_WINDOW) {
    const newestFirst = this.root.getRange({ start: [this.id, Number.MAX_SAFE_INTEGER], end: [this.id, -1], reverse: true, limit });
    const items = [...newestFirst.map((e) => e.value)].reverse();
    const first = items.findIndex((i) => 'role' in i && i.role === 'user');
    return first < 0 ? [] : items.slice(first);
  }
  async addItems(items: AgentInputItem[]) {
    for (const item of items) void this.root.put([this.id, this.seq++], item);
    await this.root.flushed;
  }
  async popItem() {
    if (this.seq === 0) return undefined;
    const key: [string, number] = [this.id, --this.seq];
    const item = this.root.get(key);
    await this.root.remove(key);
    return item;
  }
  async clearSession() {
    for (const { key } of this.root.getRange({ start: [this.id, 0], end: [this.id, Number.MAX_SAFE_INTEGER] })) void this.root.remove(key);
    this.seq = 0;
    await this.root.flushed;
  }
}

interface Block {
  durationMs: number;
}
export interface PeerBlock {
  turns: number;
  seconds: number;
  latenciesMs: number[];
}

const CONVERSATIONS = Number(process.env.CONVERSATIONS ?? 200);
const HISTORY_WINDOW = 20;
setTracingDisabled(true);
const client = new OpenAI({ baseURL: process.env.MODEL_URL, apiKey: 'bench', maxRetries: 0 });
const getOrderStatus = tool({
  name: 'getOrderStatus',
  description: 'Get the status of an order',
  parameters: z.object({ orderId: z.string() }),
  execute: async ({ orderId }) => ({ orderId, status: 'shipped' }),
});
const agent = new Agent({
  name: 'support',
  instructions: 'You are a helpful support assistant.',
  model: new OpenAIChatCompletionsModel(client, 'fake-1'),
  tools: [getOrderStatus],
});
const root = open<AgentInputItem, [string, number]>({ path: tempDir('bench-peer-agents-') });
const sessions = Array.from({ length: CONVERSATIONS }, (_, i) => new LmdbSession(root, `peer-${i}`));

/** One turn, streamed as Parley's is: resolves with the final text once the run (and its session writes) completed. */
async function turn(session: Session): Promise<string> {
  const result = await run(agent, 'What is the status of order 1001?', { session, stream: true, maxTurns: 4 });
  for await (const _event of result); // consumed as a channel would
  await result.completed;
  return String(result.finalOutput);
}

async function block({ durationMs }: Block): Promise<PeerBlock> {
  const latencies: number[] = [];
  const started = performance.now();
  const end = started + durationMs;
  await Promise.all(
    sessions.map(async (s) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const text = await turn(s);
        if (!text.includes('shipped')) throw new Error(`unexpected answer: ${text}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { turns: latencies.length, seconds: (performance.now() - started) / 1000, latenciesMs: latencies };
}

process.on('message', (m: Block) => void block(m).then((r) => process.send!(r)));
process.on('disconnect', () => void root.close().then(() => process.exit(0)));
process.send!({ ready: true });
