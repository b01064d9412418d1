// Agent accounts over HTTP for the integration tests: create (service secret), set the password, sign in.
import { expect } from 'vitest';
import { TEST_SECRET, type TestParley } from './parley.ts';

export const PASSWORD = 'correct horse battery';

export interface SignedInAgent {
  agentId: string;
  cookie: string;
  csrf: string;
  setCookie: string;
}

export const post = (p: TestParley, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${p.url()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

export const asService = { authorization: `Bearer ${TEST_SECRET}` };

export const setClock = (p: TestParley, offsetMs: number) => post(p, '/__test__/clock', { offsetMs });

/** Creates an account with the service secret; resolves with its id and the set-password link's token. */
export async function createAgent(p: TestParley, fields: { email: string; name?: string; role?: 'agent' | 'admin' }) {
  const r = await post(p, '/api/v1/agents', { name: fields.name ?? 'Ada', email: fields.email, role: fields.role ?? 'agent' }, asService);
  expect(r.status).toBe(201);
  const body = (await r.json()) as { agent: { agentId: string }; setPasswordUrl: string };
  const token = new URL(body.setPasswordUrl, 'http://x').searchParams.get('token')!;
  return { agentId: body.agent.agentId, token, setPasswordUrl: body.setPasswordUrl };
}

export async function signIn(p: TestParley, email: string, password = PASSWORD, headers: Record<string, string> = {}) {
  return post(p, '/api/v1/agents/sign-in', { email, password }, headers);
}

/** A new account with a password, signed in: its cookie and CSRF token. */
export async function newSignedInAgent(p: TestParley, email: string, role: 'agent' | 'admin' = 'agent'): Promise<SignedInAgent> {
  const { agentId, token } = await createAgent(p, { email, role });
  expect((await post(p, '/api/v1/agents/set-password', { token, password: PASSWORD })).status).toBe(200);
  return { agentId, ...(await sessionOf(p, email)) };
}

export async function sessionOf(p: TestParley, email: string) {
  const r = await signIn(p, email);
  expect(r.status).toBe(200);
  const setCookie = r.headers.getSetCookie()[0];
  const cookie = setCookie.split(';')[0];
  const csrf = ((await r.json()) as { csrfToken: string }).csrfToken;
  return { cookie, csrf, setCookie };
}
