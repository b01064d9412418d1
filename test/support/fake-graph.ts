// A local stand-in for Meta's Graph API: records requests, answers like Meta,
// and can be told to fail (429, 500, 400) or hang for the next requests.
import Fastify from 'fastify';

export interface GraphRequest {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  at: number;
}

export type Failure = { status: 429; retryAfter?: string } | { status: 500 | 502 | 503 } | { status: 400; code?: number; message?: string } | { hang: true };

export interface FakeGraph {
  url: string;
  requests: GraphRequest[];
  /** Successful sends only (what a phone would receive). */
  delivered(): GraphRequest[];
  failNext(...failures: Failure[]): void;
  close(): Promise<void>;
}

export async function startFakeGraph(): Promise<FakeGraph> {
  const app = Fastify({ logger: false });
  const requests: GraphRequest[] = [];
  const ok: GraphRequest[] = [];
  const failures: Failure[] = [];
  const hanging = new Set<() => void>();
  let n = 0;
  app.post('/v21.0/:phoneId/messages', async (request, reply) => {
    const rec = { url: request.url, headers: request.headers, body: request.body, at: Date.now() };
    requests.push(rec);
    const f = failures.shift();
    if (f && 'hang' in f) {
      await new Promise<void>((resolve) => hanging.add(resolve));
      return reply.code(504).send({});
    }
    if (f?.status === 429) return reply.code(429).header('retry-after', f.retryAfter ?? '0').send({ error: { message: 'Rate limited', type: 'OAuthException', code: 4, fbtrace_id: 'x' } });
    if (f && f.status >= 500) return reply.code(f.status).send({ error: { message: 'Service unavailable', type: 'OAuthException', code: 2, fbtrace_id: 'x' } });
    if (f?.status === 400) {
      return reply.code(400).send({ error: { message: f.message ?? '(#131030) Recipient phone number not in allowed list', type: 'OAuthException', code: f.code ?? 131030, fbtrace_id: 'x' } });
    }
    ok.push(rec);
    const body = request.body as { to: string };
    return { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.fake.${++n}` }] };
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `${address}/v21.0`,
    requests,
    delivered: () => ok,
    failNext: (...f) => void failures.push(...f),
    async close() {
      for (const h of hanging) h();
      await app.close();
    },
  };
}
