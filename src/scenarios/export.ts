// `parley test export <conversationId>`: a scenario from a stored conversation — its customer lines as steps, what
// the assistant did after each (tools with their arguments, confirmations, the reply's first sentence, a handoff) as
// expectations, ready to edit.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { openStore } from '../store/open.ts';
import { ANONYMOUS_PREFIX, isVisitorCustomerId, type ConversationMeta, type MessageRecord } from '../store/model.ts';
import type { Expectation, Scenario, Step } from './schema.ts';
import { storedHistory, toolCallsOf } from '../conversations/tool-calls.ts';
import type { TestIo } from './io.ts';

export const SCHEMA_LINE = '# yaml-language-server: $schema=https://raw.githubusercontent.com/parley/parley/main/docs/scenario.schema.json';

/** The first sentence of a reply (at most 80 characters): specific enough to catch a change, short enough to keep. */
const firstSentence = (text: string) => (text.match(/^.*?[.!?](?=\s|$)/)?.[0] ?? text).slice(0, 80).trim();

function expectationsOf(turn: MessageRecord[]): Expectation[] {
  const out: Expectation[] = [];
  const outcomes = turn.filter((r) => r.role === 'confirmation' && r.data?.outcome !== 'requested');
  for (const call of toolCallsOf(turn)) {
    const e: Expectation = { tool: call.name, args: call.args };
    if (outcomes.some((c) => c.data?.name === call.name && c.data?.outcome === 'approved')) e.confirmation = 'approve';
    out.push(e);
  }
  for (const c of outcomes) if (c.data?.outcome === 'denied') out.push({ tool: String(c.data.name), confirmation: 'decline' });
  // An approval answered after the tool's record would be lost: a confirmation with no call yet comes first.
  const reply = turn
    .filter((r) => r.role === 'assistant')
    .map((r) => r.text)
    .join(' ');
  if (reply) out.push({ reply: { contains: firstSentence(reply) } });
  if (turn.some((r) => r.role === 'handoff' && r.data?.phase === 'requested')) out.push({ handoff: true });
  return out;
}

export function scenarioFrom(meta: ConversationMeta, records: MessageRecord[]): Scenario {
  const steps: Step[] = [];
  let turn: MessageRecord[] = [];
  const flush = () => {
    for (const e of expectationsOf(turn)) steps.push({ expect: e });
    turn = [];
  };
  for (const r of records) {
    if (r.role === 'user') {
      flush();
      steps.push({ customer: r.text });
    } else turn.push(r);
  }
  flush();
  const externalId = (meta.externalId ?? meta.customerId).replace(ANONYMOUS_PREFIX, '');
  return {
    name: `conversation ${meta.conversationId}`,
    customer: { externalId: `${externalId}-replay`, channel: meta.channel, verified: !isVisitorCustomerId(meta.customerId) },
    steps,
    expect: [],
    judge: [],
  };
}

export function scenarioYaml(s: Scenario): string {
  const { expect, judge, ...rest } = s;
  const shown = Object.assign({}, rest, expect.length ? { expect } : {}, judge.length ? { judge } : {});
  return `${SCHEMA_LINE}\n${stringify(shown, { lineWidth: 120 })}`;
}

export async function exportCommand(args: string[], output: string | undefined, io: TestIo): Promise<number> {
  const conversationId = args[0];
  if (!conversationId || args.length > 1) return (io.err('Usage: parley test export <conversationId> [--output file]\n'), 64);
  const store = await openStore(io.loadConfig().storage);
  try {
    const record = await store.conversations.get(conversationId);
    if (!record) return (io.err(`parley test export: no conversation ${conversationId} in this store\n`), 1);
    const text = scenarioYaml(scenarioFrom(record, await storedHistory(store.history, conversationId)));
    if (output) writeFileSync(output, text);
    else io.out(text);
    return 0;
  } finally {
    await store.close();
  }
}
