// GET /demo/session — only with `demo.backend: true` (the default profile).
// Gives the demo page a customer and a session token, as an integrator's own
// backend would after a magic link. A cookie keeps the visitor's identity so
// a reload shows the same conversation. It hands a session token to whoever
// asks, so only loopback clients get one unless demo.allow_remote_sessions.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { CustomerRepo } from '../customers/repo.ts';
import { HttpError } from '../http/errors.ts';
import type { Services } from '../services.ts';

const COOKIE = 'parley_demo_visitor';

export function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join('='));
    } catch {
      return undefined; // not valid percent-encoding (e.g. a lone `%`): no visitor id, a new one is made
    }
  }
  return undefined;
}

export async function demoPlugin(app: FastifyInstance, o: { services: Services; customers: CustomerRepo; tokens: { issue(customerId: string): string } }) {
  app.get('/demo/session', async (request, reply) => {
    if (!o.services.config.demo.allow_remote_sessions && !isLoopback(request.ip)) {
      throw new HttpError('forbidden', 'Demo sessions are served to this machine only (demo.allow_remote_sessions: false)');
    }
    let visitor = readCookie(request.headers.cookie, COOKIE);
    if (!visitor || !/^[a-z0-9-]{8,64}$/.test(visitor)) visitor = randomUUID();
    const customer = await o.customers.upsert({ externalId: `demo-${visitor}`, email: `visitor-${visitor.slice(0, 8)}@demo.parley.local` });
    reply.header('set-cookie', `${COOKIE}=${visitor}; Path=/; HttpOnly; SameSite=Lax; Max-Age=2592000`).header('cache-control', 'no-store');
    const host = request.headers.host ?? `${o.services.config.server.host}:${o.services.config.server.port}`;
    return { serverUrl: `${request.protocol}://${host}`, customerId: customer.customerId, authToken: o.tokens.issue(customer.customerId) };
  });
}
