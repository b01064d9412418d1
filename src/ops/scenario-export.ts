// From a stored conversation to a scenario (`parley test export <conversationId>`, and the dashboard's "Export as
// test" through GET /api/v1/conversations/{id}/scenario): its customer lines as steps, what the assistant did after
// each (tools with their arguments, confirmations, the reply's first sentence, a handoff) as expectations, ready to
// edit. The shapes are those of src/scenarios/schema.ts (which parses what this writes); they are spelled out here so
// that the operators' routes need nothing of the scenarios folder.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { stringify } from 'yaml';
import { z } from 'zod';
import { storedHistory, toolCallsOf } from '../conversations/tool-calls.ts';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import { ANONYMOUS_PREFIX, isVisitorCustomerId, type ConversationMeta, type MessageRecord } from '../store/model.ts';

export interface ExportedExpectation {
  tool?: string;
  args?: Record<string, unknown>;
  confirmation?: 'approve' | 'decline';
  reply?: { contains: string };
  handoff?: boolean;
}
export type ExportedStep = { customer: string } | { expect: ExportedExpectation };
export interface ExportedScenario {
  name: string;
  customer: { externalId: string; channel: 'web' | 'whatsapp'; verified: boolean };
  steps: ExportedStep[];
  expect: ExportedExpectation[];
  judge: string[];
}

export const SCHEMA_LINE = '# yaml-language-server: $schema=https://raw.githubusercontent.com/parley/parley/main/docs/scenario.schema.json';

/** The first sentence of a reply (at most 80 characters): specific enough to catch a change, short enough to keep. */
const firstSentence = (text: string) => (text.match(/^.*?[.!?](?=\s|$)/)?.[0] ?? text).slice(0, 80).trim();

function expectationsOf(turn: MessageRecord[]): ExportedExpectation[] {
  const out: ExportedExpectation[] = [];
  const outcomes = turn.filter((r) => r.role === 'confirmation' && r.data?.outcome !== 'requested');
  for (const call of toolCallsOf(turn)) {
    const e: ExportedExpectation = { tool: call.name, args: call.args };
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

export function scenarioFrom(meta: ConversationMeta, records: MessageRecord[]): ExportedScenario {
  const steps: ExportedStep[] = [];
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

export function scenarioYaml(s: ExportedScenario): string {
  const { expect, judge, ...rest } = s;
  const shown = Object.assign({}, rest, expect.length ? { expect } : {}, judge.length ? { judge } : {});
  return `${SCHEMA_LINE}\n${stringify(shown, { lineWidth: 120 })}`;
}

const Params = z.strictObject({ conversationId: z.string().min(1).max(256) });

/** The file name a download gets: the conversation id, with anything but letters, digits, `-` and `_` replaced. */
export const scenarioFileName = (conversationId: string) => `${conversationId.replace(/[^\w-]/g, '_')}.scenario.yaml`;

/** GET /api/v1/conversations/{id}/scenario: the scenario YAML, as a download (service secret or a signed-in person). */
export async function scenarioExportPlugin(app: FastifyInstance, o: { services: Services; auth?: (request: FastifyRequest) => Promise<void> }) {
  const onRequest = o.auth ?? requireServiceSecret(() => o.services.secret);
  app.get('/api/v1/conversations/:conversationId/scenario', { onRequest }, async (request, reply) => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    const { store } = o.services;
    const record = await store.conversations.get(conversationId);
    if (!record) throw new HttpError('conversation_not_found');
    const text = scenarioYaml(scenarioFrom(record, await storedHistory(store.history, conversationId)));
    return reply
      .type('application/yaml; charset=utf-8')
      .header('content-disposition', `attachment; filename="${scenarioFileName(conversationId)}"`)
      .header('cache-control', 'no-store')
      .send(text);
  });
}
