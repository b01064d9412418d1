// The service-secret hook hashes the configured secret once, not on every request: the cached hash must follow the
// secret when it changes, or a rotated-out secret would still be let in.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { requireServiceSecret } from '../../src/http/auth.ts';
import { HttpError } from '../../src/http/errors.ts';

const request = (headers: Record<string, string | string[]>) => ({ headers }) as unknown as FastifyRequest;

/** 'ok', or the refused request's status and code. */
async function outcome(hook: (r: FastifyRequest) => Promise<void>, headers: Record<string, string | string[]>) {
  try {
    await hook(request(headers));
    return 'ok';
  } catch (err) {
    return err instanceof HttpError ? `${err.status} ${err.code}` : String(err);
  }
}

describe('requireServiceSecret', () => {
  it('lets in the secret as Bearer or x-service-secret, and refuses anything else with a 401', async () => {
    const hook = requireServiceSecret(() => 's3cret');
    expect(await outcome(hook, { authorization: 'Bearer s3cret' })).toBe('ok');
    expect(await outcome(hook, { 'x-service-secret': 's3cret' })).toBe('ok');
    expect(await outcome(hook, { 'x-service-secret': ['nope', 's3cret'] })).toBe('ok');
    expect(await outcome(hook, { authorization: 'Bearer nope', 'x-service-secret': 's3cret' })).toBe('ok');
    expect(await outcome(hook, { authorization: 'Bearer s3cre' })).toBe('401 unauthorized');
    expect(await outcome(hook, { authorization: 'Bearer s3cret!' })).toBe('401 unauthorized');
    expect(await outcome(hook, { authorization: 'Basic s3cret' })).toBe('401 unauthorized');
    expect(await outcome(hook, { 'x-service-secret': '' })).toBe('401 unauthorized');
    expect(await outcome(hook, {})).toBe('401 unauthorized');
  });

  it('follows a secret that changes: the old one is refused at once, the new one let in', async () => {
    let secret = 'first-secret';
    const hook = requireServiceSecret(() => secret);
    expect(await outcome(hook, { authorization: 'Bearer first-secret' })).toBe('ok');
    secret = 'second-secret';
    expect(await outcome(hook, { authorization: 'Bearer first-secret' })).toBe('401 unauthorized');
    expect(await outcome(hook, { authorization: 'Bearer second-secret' })).toBe('ok');
    secret = 'first-secret';
    expect(await outcome(hook, { 'x-service-secret': 'second-secret' })).toBe('401 unauthorized');
    expect(await outcome(hook, { 'x-service-secret': 'first-secret' })).toBe('ok');
  });

  it('lets nothing in while the secret is empty', async () => {
    const hook = requireServiceSecret(() => '');
    expect(await outcome(hook, { authorization: 'Bearer x' })).toBe('401 unauthorized');
    expect(await outcome(hook, { 'x-service-secret': '' })).toBe('401 unauthorized');
  });
});
