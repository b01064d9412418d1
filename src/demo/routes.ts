// GET /demo/session — only with `demo.backend: true` (the default profile).
// Gives the demo page a customer and a session token, as an integrator's own
// backend would after a magic link. A cookie keeps the visitor's identity so
// a reload shows the same conversation.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { CustomerRepo } from '../customers/repo.ts';
import type { Services } from '../services.ts';

const COOKIE = 'parley_demo_visitor';

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

export async function demoPlugin(
  app: FastifyInstance,
  o: { services: Services; customers: CustomerRepo; tokens: { issue(customerId: string): string } },
) {
  app.get('/demo/session', async (request, reply) => {
    let visitor = readCookie(request.headers.cookie, COOKIE);
    if (!visitor || !/^[a-z0-9-]{8,64}$/.test(visitor)) visitor = randomUUID();
    const customer = await o.customers.upsert({ externalId: `demo-${visitor}`, email: `visitor-${visitor.slice(0, 8)}@demo.parley.local` });
    reply
      .header('set-cookie', `${COOKIE}=${visitor}; Path=/; HttpOnly; SameSite=Lax; Max-Age=2592000`)
      .header('cache-control', 'no-store');
    const host = request.headers.host ?? `${o.services.config.server.host}:${o.services.config.server.port}`;
    return { serverUrl: `${request.protocol}://${host}`, customerId: customer.customerId, authToken: o.tokens.issue(customer.customerId) };
  });
}
