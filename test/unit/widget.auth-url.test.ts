// Sessions that renew themselves (`authUrl`): reading the auth URL's answer, spacing the fetches out, and the
// controller fetching once per refusal, against a fake WebSocket, a fake fetch and fake timers.
import { describe, expect, it, vi } from 'vitest';
import { AUTH_FETCH_TIMEOUT_MS, createRenewal, createRenewalPacer, parseAuthResponse, RENEWAL_CALM_MS } from '../../widget/src/auth-url.ts';
import { createController } from '../../widget/src/controller.ts';
import { fakeSockets, type FakeSocket, useWidgetFakes, widgetReady as ready } from '../support/widget-socket.ts';

const sockets = fakeSockets();
const latest = sockets.latest;
const setTimer = (fn: () => void, ms: number) => setTimeout(fn, ms);
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};
/** Parley refuses the token on this socket: error unauthorized, close 4001. */
const refuse = async (s: FakeSocket) => {
  s.push({ type: 'error', code: 'unauthorized', message: 'Session token refused (expired)' });
  s.drop();
  await flush();
};

useWidgetFakes(sockets);

describe('parseAuthResponse', () => {
  it('reads the token as text (trimmed) or as JSON {token} / {sessionToken}, with an optional customerId', () => {
    expect(parseAuthResponse('v1.eyJzdWIiOiJjMSJ9.c2ln\n')).toEqual({ token: 'v1.eyJzdWIiOiJjMSJ9.c2ln' });
    expect(parseAuthResponse('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.a-b_c')).toEqual({ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.a-b_c' });
    expect(parseAuthResponse('{"token":"v1.abc.def"}')).toEqual({ token: 'v1.abc.def' });
    expect(parseAuthResponse(' {"token":"v1.abc.def","customerId":"cus_1"} ')).toEqual({ token: 'v1.abc.def', customerId: 'cus_1' });
    expect(parseAuthResponse('{"sessionToken":"v1.abc.def","customerId":"cus_1","email":"a@b.c"}')).toEqual({ token: 'v1.abc.def', customerId: 'cus_1' });
    expect(parseAuthResponse('"v1.abc.def"')).toEqual({ token: 'v1.abc.def' });
    expect(parseAuthResponse('{"token":"v1.abc.def","customerId":""}')).toEqual({ token: 'v1.abc.def' });
  });

  it('finds no token in an empty body, an HTML page, JSON without a token, or something too long to be one', () => {
    for (const body of [
      '',
      '   ',
      '<!doctype html><html><body>Please sign in</body></html>',
      'Not signed in',
      '{}',
      '{"token":5}',
      '{"token":""}',
      '{"error":"unauthorized"}',
      '{"token":"has space"}',
      '{not json',
      'null',
      'true',
      '42',
      '[]',
      'x'.repeat(2049),
    ]) {
      expect(parseAuthResponse(body), body.slice(0, 40)).toBeUndefined();
    }
    expect(parseAuthResponse('x'.repeat(2048))).toEqual({ token: 'x'.repeat(2048) });
  });
});

describe('the renewal pacer', () => {
  it('the first renewal goes at once; renewals within a minute of the last wait 1 s, 2 s, 4 s … up to 60 s; a calm minute resets', () => {
    let t = 1_000_000;
    const pacer = createRenewalPacer(() => t);
    expect(pacer.next()).toBe(0);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      t += 10; // refused again right away
      const w = pacer.next();
      waits.push(w);
      t += w;
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    t += RENEWAL_CALM_MS; // an hour-long token would be far calmer than this
    expect(pacer.next()).toBe(0);
    t += RENEWAL_CALM_MS - 1;
    expect(pacer.next()).toBe(1000);
  });
});

type FetchCall = { url: string; init: RequestInit };
const fakeFetch = (answer: (n: number) => Response | Promise<Response>) => {
  const calls: FetchCall[] = [];
  const impl = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return answer(calls.length);
  }) as unknown as typeof fetch;
  return { calls, impl };
};

describe('createRenewal', () => {
  it('fetches the auth URL with the page cookies and puts the token in place', async () => {
    const got: unknown[] = [];
    const f = fakeFetch(() => new Response('{"token":"v1.fresh.sig","customerId":"cus_9"}', { headers: { 'content-type': 'application/json' } }));
    const r = createRenewal({ authUrl: '/parley-token', setAuth: (a) => got.push(a), log: () => {}, fetchImpl: f.impl, setTimer });
    expect(await r.firstAuth!()).toBe(true);
    expect(got).toEqual([{ token: 'v1.fresh.sig', customerId: 'cus_9' }]);
    expect(f.calls).toHaveLength(1);
    expect(f.calls[0].url).toBe('/parley-token');
    expect(f.calls[0].init).toMatchObject({ credentials: 'include', cache: 'no-store' });
  });

  it('an auth URL that fails (status, no token, network, hangs) resolves false and says why in the console', async () => {
    const lines: string[] = [];
    const answers: (() => Promise<Response>)[] = [
      async () => new Response('nope', { status: 401 }),
      async () => new Response('<html>Sign in</html>'),
      async () => {
        throw new TypeError('Failed to fetch');
      },
    ];
    for (const answer of answers) {
      const r = createRenewal({ authUrl: '/t', setAuth: () => expect.unreachable(), log: (l) => lines.push(l), fetchImpl: fakeFetch(answer).impl, setTimer });
      expect(await r.firstAuth!()).toBe(false);
    }
    // a hanging auth URL is aborted after AUTH_FETCH_TIMEOUT_MS
    const hanging = (async (_url: string, init: RequestInit) =>
      new Promise<Response>((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(new Error('aborted'))))) as unknown as typeof fetch;
    const r = createRenewal({ authUrl: '/t', setAuth: () => expect.unreachable(), log: (l) => lines.push(l), fetchImpl: hanging, setTimer });
    let result: boolean | undefined;
    void r.firstAuth!().then((ok) => (result = ok));
    await vi.advanceTimersByTimeAsync(AUTH_FETCH_TIMEOUT_MS - 1);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toBe(false);
    expect(lines).toEqual([
      '[parley] auth URL: no token (401; expected the token as text or JSON {"token"})',
      '[parley] auth URL: no token (200; expected the token as text or JSON {"token"})',
      '[parley] auth URL: TypeError: Failed to fetch',
      '[parley] auth URL: Error: aborted',
    ]);
  });

  it('onAuthExpired first; when it gives no token (or throws), the auth URL', async () => {
    const got: string[] = [];
    const f = fakeFetch(() => new Response('v1.from.url'));
    let hook: () => string | undefined = () => 'v1.from.hook';
    const lines: string[] = [];
    const r = createRenewal({
      authUrl: '/t',
      onAuthExpired: () => hook(),
      setAuth: (a) => got.push(a.token),
      log: (l) => lines.push(l),
      fetchImpl: f.impl,
      setTimer,
    });
    expect(await r.refreshAuth!()).toBe(true);
    expect(f.calls).toHaveLength(0);
    hook = () => undefined;
    expect(await r.refreshAuth!()).toBe(true);
    hook = () => {
      throw new Error('backend down');
    };
    const third = r.refreshAuth!();
    await vi.advanceTimersByTimeAsync(1000); // the second URL fetch in a minute waits 1 s
    expect(await third).toBe(true);
    expect(got).toEqual(['v1.from.hook', 'v1.from.url', 'v1.from.url']);
    expect(f.calls).toHaveLength(2);
    expect(lines).toEqual(['[parley] onAuthExpired failed: Error: backend down']);
  });

  it('neither onAuthExpired nor an auth URL: no hooks (the session ends as it always did)', () => {
    expect(createRenewal({ setAuth: () => {}, log: () => {} })).toEqual({ refreshAuth: undefined, firstAuth: undefined });
  });
});

describe('the controller with an auth URL', () => {
  const make = (answer: (n: number) => Response | Promise<Response>) => {
    let token: string | undefined;
    const f = fakeFetch(answer);
    const lines: string[] = [];
    const renewal = createRenewal({ authUrl: '/parley-token', setAuth: (a) => (token = a.token), log: (l) => lines.push(l), fetchImpl: f.impl, setTimer });
    const c = createController({
      url: 'ws://x',
      init: () => (token ? { type: 'init', customerId: 'c1', authToken: token } : { type: 'init', customerId: 'c1' }),
      render: () => {},
      newId: () => 'm1',
      refreshAuth: renewal.refreshAuth,
      firstAuth: renewal.firstAuth,
      log: (l) => lines.push(l),
      WebSocketImpl: sockets.WebSocketImpl,
      setTimer,
    });
    return { c, calls: f.calls, lines };
  };

  it('starts without a token: fetches one before the first socket, then renews once per refusal and reconnects', async () => {
    const { c, calls } = make((n) => new Response(n % 2 ? `v1.t${n}.s` : JSON.stringify({ token: `v1.t${n}.s` })));
    expect(sockets.all).toHaveLength(0); // no socket before the token
    await flush();
    expect(calls).toHaveLength(1);
    expect(sockets.all).toHaveLength(1);
    latest().accept();
    expect(latest().sent[0]).toEqual({ type: 'init', customerId: 'c1', authToken: 'v1.t1.s' });
    latest().push(ready());
    expect(c.state().status).toBe('Connected');

    // an hour later the socket drops and the old token is refused: one fetch at once, then a new socket
    await vi.advanceTimersByTimeAsync(3_600_000);
    latest().drop();
    await vi.advanceTimersByTimeAsync(500);
    expect(sockets.all).toHaveLength(2);
    latest().accept();
    await refuse(latest());
    expect(calls).toHaveLength(2);
    expect(sockets.all).toHaveLength(3);
    latest().accept();
    expect(latest().sent[0]).toEqual({ type: 'init', customerId: 'c1', authToken: 'v1.t2.s' }); // from JSON {token}
    latest().push(ready());
    expect(c.state()).toMatchObject({ status: 'Connected' });

    // refused again soon after (a token the server keeps refusing after ready): the next fetch waits 1 s
    await refuse(latest());
    expect(calls).toHaveLength(2);
    expect(c.state().status).toBe('Connecting');
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    await flush();
    expect(calls).toHaveLength(3);
    expect(sockets.all).toHaveLength(4);
  });

  it('a fresh token refused before ready ends the session: no second fetch for that refusal, no loop', async () => {
    const { c, calls } = make(() => new Response('v1.always.stale'));
    await flush();
    latest().accept();
    await refuse(latest()); // the fetched token is refused before any ready
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(calls).toHaveLength(1);
    expect(sockets.all).toHaveLength(1);
    expect(c.state()).toMatchObject({ status: 'Disconnected', reason: 'auth' });
  });

  it('an auth URL that fails on a refusal: one fetch, then the session-ended notice, and nothing more', async () => {
    const { c, calls, lines } = make((n) => (n === 1 ? new Response('v1.first.s') : new Response('down', { status: 503 })));
    await flush();
    latest().accept();
    latest().push(ready());
    await refuse(latest());
    await vi.advanceTimersByTimeAsync(1000); // the second fetch within a minute of the first waits 1 s
    expect(calls).toHaveLength(2);
    expect(c.state()).toMatchObject({ status: 'Disconnected', reason: 'auth' });
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(calls).toHaveLength(2);
    expect(sockets.all).toHaveLength(1);
    expect(lines).toContain('[parley] auth URL: no token (503; expected the token as text or JSON {"token"})');
  });

  it('an auth URL that fails at the start: connects without a token all the same; its refusal ends the session without another fetch', async () => {
    const { c, calls } = make(() => new Response('', { status: 401 }));
    await flush();
    expect(sockets.all).toHaveLength(1);
    latest().accept();
    expect(latest().sent[0]).toEqual({ type: 'init', customerId: 'c1' });
    await refuse(latest());
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(calls).toHaveLength(1);
    expect(c.state()).toMatchObject({ status: 'Disconnected', reason: 'auth' });
  });
});
