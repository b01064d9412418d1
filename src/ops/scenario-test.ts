// What `parley test --url` needs of a running Parley in test mode (SERVICE_TEST_MODE=1), behind the service secret:
// the tool calls of a conversation with their arguments (from its stored history; telemetry keeps only the names), and
// a call of a backend function for `expect: { backend }`. Neither route exists outside test mode: a production
// Parley never shows tool arguments over HTTP (README, "Testing your conversations").
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireServiceSecret } from '../http/auth.ts';
import { parseOr400 } from '../http/errors.ts';
import type { SdkHub, Services } from '../services.ts';
import type { HistoryStore } from '../store/repos.ts';
import { storedHistory, toolCallsOf, type ToolCall } from '../conversations/tool-calls.ts';

const Params = z.strictObject({ conversationId: z.string().min(1).max(256) });
export const BackendCallBody = z.strictObject({ name: z.string().min(1).max(128), args: z.record(z.string(), z.unknown()).default({}) });

/** The answer of POST /__test__/sdk/invoke. */
export type BackendCallAnswer = { ok: true; data: unknown } | { ok: false; error: string };

/** Calls a backend function as a tool would be called, in a verified test context (no customer, no conversation). */
export async function callBackend(hub: Pick<SdkHub, 'invoke'>, name: string, args: Record<string, unknown>): Promise<BackendCallAnswer> {
  const out = await hub.invoke(name, args, { customerId: 'parley-test', conversationId: 'parley-test', channel: 'web', verified: true });
  return out.ok ? { ok: true, data: out.data } : { ok: false, error: `${out.error.code ?? 'error'}: ${out.error.message}` };
}

export async function scenarioTestPlugin(app: FastifyInstance, o: { services: Services; history: HistoryStore; hub: Pick<SdkHub, 'invoke'> }) {
  const onRequest = requireServiceSecret(() => o.services.secret);
  app.get('/__test__/conversations/:conversationId/tool-calls', { onRequest }, async (request): Promise<{ items: ToolCall[] }> => {
    const { conversationId } = parseOr400(Params, request.params, 'params');
    return { items: toolCallsOf(await storedHistory(o.history, conversationId)) };
  });
  app.post('/__test__/sdk/invoke', { onRequest }, async (request): Promise<BackendCallAnswer> => {
    const { name, args } = parseOr400(BackendCallBody, request.body, 'body');
    return callBackend(o.hub, name, args);
  });
}
