// Test-mode-only routes (SERVICE_TEST_MODE=1). Not registered otherwise.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOr400 } from '../http/errors.ts';
import type { SdkHub, Services } from '../services.ts';

/** How far the test clock may move: 30 years back, 100 ahead. Further, times overflowed PostgreSQL's bigint and Date. */
const MAX_BACK_MS = 30 * 365 * 86_400_000;
const MAX_AHEAD_MS = 100 * 365 * 86_400_000;
const ClockBody = z.object({ offsetMs: z.number().int().min(-MAX_BACK_MS).max(MAX_AHEAD_MS) });
const TelemetryBody = z.strictObject({ persist: z.boolean() });

export async function testModePlugin(app: FastifyInstance, o: { services: Services; hub: Pick<SdkHub, 'catalog'> }) {
  app.get('/__test__/sdk/functions', async () => o.hub.catalog().map((f) => f.name));
  app.post('/__test__/clock', async (request) => {
    const { offsetMs } = parseOr400(ClockBody, request.body, 'body');
    o.services.clock.setOffset(offsetMs);
    return { offsetMs: o.services.clock.offset(), now: o.services.clock.now() };
  });
  app.get('/__test__/clock', async () => ({ offsetMs: o.services.clock.offset(), now: o.services.clock.now() }));
  // The telemetry cost benchmark compares persisting and not in one process, block by block.
  app.post('/__test__/telemetry', async (request) => {
    const { persist } = parseOr400(TelemetryBody, request.body, 'body');
    o.services.telemetry.setPersisting?.(persist);
    return { persist };
  });
}

/** GET|DELETE /__test__/whatsapp/outbox: what the test-mode WhatsApp sender sent. */
export async function whatsappTestPlugin(app: FastifyInstance, o: { outbox: { list(): unknown[]; clear(): void } }) {
  app.get('/__test__/whatsapp/outbox', async () => ({ messages: o.outbox.list() }));
  app.delete('/__test__/whatsapp/outbox', async () => {
    o.outbox.clear();
    return { messages: [] };
  });
}
