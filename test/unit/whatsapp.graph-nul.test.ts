// The Graph API is a party Parley cannot refuse: what it answers is kept (a message id stored with its send, an error's
// text and code with the send's job and telemetry), with U+FFFD for a NUL (src/http/storable-text.ts), so that both
// engines store the same and PostgreSQL's text and jsonb never refuse it. Against a local HTTP server at the edge.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGraphClient } from '../../src/whatsapp/graph-client.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A Graph API that answers every send with `status` and `body` (JSON text, as written). */
async function graph(status: number, body: string): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const send = async (url: string) =>
  createGraphClient({ graphUrl: url, phoneId: '123', token: 't', timeoutMs: 30_000 }).send({ kind: 'text', to: '+15550001111', text: 'hi' });

describe('the Graph API answering NUL', () => {
  it("an accepted send's message id holding NUL is kept with U+FFFD", async () => {
    const url = await graph(200, '{"messaging_product":"whatsapp","messages":[{"id":"wamid.a\\u0000b"}]}');
    expect(await send(url)).toEqual({ ok: true, providerMessageId: 'wamid.a\uFFFDb' });
  });

  it("an error's message and code holding NUL are kept with U+FFFD", async () => {
    const url = await graph(400, '{"error":{"message":"Invalid\\u0000parameter","code":"x\\u0000y","type":"OAuthException"}}');
    expect(await send(url)).toMatchObject({ ok: false, retryable: false, status: 400, code: 'x\uFFFDy', message: 'Invalid\uFFFDparameter' });
  });
});
