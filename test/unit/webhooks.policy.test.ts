// Issue 34: the pure parts of webhook delivery: the circuit's transitions, the outbound address policy (with a
// resolver standing in for DNS), URL credential masking, and what a dead letter keeps.
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { guardedLookup, isPrivateAddress, privateLiteral, PRIVATE_ADDRESS } from '../../src/config/address-policy.ts';
import { admission, afterAttempt, closedCircuit, FAILING_FOR_MS, FAILURES_TO_OPEN, MAX_OPEN_MS, probing, type Circuit } from '../../src/webhooks/circuit.ts';
import { deadLetterPayload } from '../../src/webhooks/dead-letter.ts';
import type { Job } from '../../src/store/model.ts';
import type { WebhookJob } from '../../src/webhooks/delivery.ts';
import { keyPrefix, requestTarget } from '../../src/webhooks/endpoints.ts';
import { judge } from '../../src/webhooks/outcome.ts';
import { maskUrl, urlCredentials } from '../../src/config/mask-url.ts';

describe('the circuit of an endpoint', () => {
  const fail = (c: Circuit, at: number) => afterAttempt(c, false, at, 1000);

  it('opens after FAILURES_TO_OPEN failures in a row spread over FAILING_FOR_MS, not before; a success resets the count', () => {
    let c = closedCircuit();
    for (let i = 0; i < FAILURES_TO_OPEN + 5; i++) c = fail(c, i); // many failures within a second: a few events refused
    expect(c.state).toBe('closed');
    c = fail(c, FAILING_FOR_MS);
    expect(c).toEqual({ state: 'open', until: FAILING_FOR_MS + 1000, openMs: 1000 });
    let d = closedCircuit();
    for (let i = 0; i < FAILURES_TO_OPEN - 1; i++) d = fail(d, i * FAILING_FOR_MS);
    d = afterAttempt(d, true, FAILING_FOR_MS * 5, 1000);
    expect(fail(d, FAILING_FOR_MS * 6)).toEqual({ state: 'closed', failures: 1, since: FAILING_FOR_MS * 6 });
  });

  it('open: refuses until its time, then lets one probe through (others wait); the probe closes it or opens it twice as long, up to the cap', () => {
    let c: Circuit = { state: 'open', until: 5000, openMs: 1000 };
    expect(admission(c, 4999)).toBe('refuse');
    expect(admission(c, 5000)).toBe('probe');
    c = probing(c);
    expect(admission(c, 5001)).toBe('wait');
    expect(afterAttempt(c, true, 6000, 1000)).toEqual(closedCircuit());
    const again = fail(c, 6000);
    expect(again).toEqual({ state: 'open', until: 8000, openMs: 2000 });
    expect(fail(probing({ state: 'open', until: 0, openMs: MAX_OPEN_MS }), 10)).toEqual({ state: 'open', until: 10 + MAX_OPEN_MS, openMs: MAX_OPEN_MS });
  });
});

describe('the outbound address policy', () => {
  const refused = [
    '127.0.0.1',
    '127.9.9.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '100.127.255.255',
    '169.254.169.254',
    '0.0.0.0',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '[::1]',
  ];
  const allowed = ['8.8.8.8', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', 'example.com'];

  it('classifies loopback, link-local, private, CGNAT, unique-local, unspecified and IPv4-mapped forms as refused; public ones not', () => {
    for (const a of refused) expect(isPrivateAddress(a), a).toBe(true);
    for (const a of allowed) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('finds a private literal in a URL, whatever its spelling (localhost, decimal, hex, bracketed IPv6); a name is left to DNS', () => {
    expect(privateLiteral('http://localhost:8080/x')).toBe('localhost');
    expect(privateLiteral('http://LOCALHOST./x')).toBe('localhost');
    expect(privateLiteral('http://2130706433/x')).toBe('127.0.0.1');
    expect(privateLiteral('http://0x7f.1/x')).toBe('127.0.0.1');
    expect(privateLiteral('http://[::ffff:169.254.169.254]/latest/meta-data')).toBe('::ffff:a9fe:a9fe');
    expect(privateLiteral('https://hooks.example.com/x')).toBeUndefined();
    expect(privateLiteral('https://8.8.8.8/x')).toBeUndefined();
  });

  it('the connection’s lookup refuses a name that resolves only to refused addresses and connects to an allowed one otherwise', async () => {
    const resolver = (answers: LookupAddress[]) =>
      ((_host: string, _o: unknown, cb: (e: Error | null, a: LookupAddress[]) => void) => cb(null, answers)) as unknown as typeof import('node:dns').lookup;
    const run = (answers: LookupAddress[], all: boolean) =>
      new Promise<{ err: (Error & { code?: string }) | null; result: unknown }>((resolve) =>
        guardedLookup(undefined, resolver(answers))('hooks.example', { all } as never, (err: Error | null, address: unknown) =>
          resolve({ err: err as (Error & { code?: string }) | null, result: address }),
        ),
      );
    const meta = await run([{ address: '169.254.169.254', family: 4 }], false);
    expect(meta.err?.code).toBe(PRIVATE_ADDRESS);
    expect(meta.err?.message).toContain('hooks.example resolves to 169.254.169.254');
    expect((await run([{ address: 'fd00:ec2::254', family: 6 }], true)).err?.code).toBe(PRIVATE_ADDRESS);
    const mixed = [
      { address: '10.0.0.5', family: 4 },
      { address: '93.184.216.34', family: 4 },
    ];
    expect(await run(mixed, false)).toEqual({ err: null, result: '93.184.216.34' });
    expect(await run(mixed, true)).toEqual({ err: null, result: [{ address: '93.184.216.34', family: 4 }] });
  });
});

describe('credentials in webhook URLs', () => {
  const url = 'https://alice:pa55-w0rd@hooks.example.com/in?x=1&token=tok-123&API_KEY=k-456&sig=s-789&mySecret=z&Password=p&auth=a&plain=keep';

  it('are masked: user info and every parameter named like a credential; the rest of the URL stays', () => {
    expect(maskUrl(url)).toBe('https://***:***@hooks.example.com/in?x=1&token=***&API_KEY=***&sig=***&mySecret=***&Password=***&auth=***&plain=keep');
    expect(maskUrl('http://h.example/x')).toBe('http://h.example/x');
    expect(maskUrl('not a url')).toBe('***');
  });

  it('are listed for the log scrubber (raw and decoded)', () => {
    expect(urlCredentials('https://u%40x:p%2Fw@h.example/?signature=a%2Bb')).toEqual(expect.arrayContaining(['u%40x', 'p%2Fw', 'a%2Bb', 'a+b', 'u@x', 'p/w']));
  });

  it('user info is sent as HTTP Basic authentication, not in the request URL', () => {
    expect(requestTarget('https://us%20er:p%40ss@h.example/x?a=1')).toEqual({
      target: 'https://h.example/x?a=1',
      headers: { authorization: `Basic ${Buffer.from('us er:p@ss').toString('base64')}` },
    });
    expect(requestTarget('https://h.example/x')).toEqual({ target: 'https://h.example/x', headers: {} });
  });
});

describe('a webhook dead letter', () => {
  it('keeps the event’s ids and metadata, never the customer’s words', () => {
    const event = {
      id: 'evt_1',
      type: 'message.customer' as const,
      createdAt: 5,
      data: { conversationId: 'c', customerId: 'u', channel: 'web', messageId: 'm', text: 'my card is 4111', content: { type: 'text' }, reason: 'angry' },
    };
    expect(deadLetterPayload({ url: 'https://h.example', event })).toEqual({
      url: 'https://h.example',
      event: { id: 'evt_1', type: 'message.customer', createdAt: 5, data: { conversationId: 'c', customerId: 'u', channel: 'web', messageId: 'm' } },
    });
  });
});

describe('what an attempt’s result means', () => {
  const url = 'https://h.example/in';
  const job = (o: Partial<Job<WebhookJob>> = {}): Job<WebhookJob> =>
    Object.assign(
      {
        id: 'wh:1',
        seq: 1,
        key: `${keyPrefix(url)}evt_1`,
        attempts: 2,
        runAt: 0,
        enqueuedAt: 1000,
        payload: { url, event: { id: 'evt_1', type: 'message.customer' as const, createdAt: 0, data: {} } },
      },
      o,
    );
  const at = (now: number) => ({ now, retryHours: 1, retryBaseMs: 1000 });

  it('2xx delivered; 410 and a removed endpoint dead at once; others retried with backoff until the window ends', () => {
    expect(judge(204, job(), at(2000))).toEqual({ kind: 'delivered' });
    expect(judge(410, job(), at(2000))).toEqual({ kind: 'dead', error: 'HTTP 410', reason: 'HTTP 410 Gone: the receiver ended this delivery' });
    expect(judge('endpoint_removed', job(), at(2000))).toMatchObject({ kind: 'dead', reason: 'the endpoint is no longer configured' });
    const retry = judge(500, job(), at(2000));
    expect(retry).toMatchObject({ kind: 'retrying', error: 'HTTP 500' });
    expect((retry as { nextAt: number }).nextAt).toBeGreaterThanOrEqual(2000 + 2000); // half of 1000 × 2²
    expect(judge('timeout', job(), at(1000 + 3600_000))).toEqual({ kind: 'dead', error: 'timeout', reason: 'gave up after 1 h: timeout' });
    // The last retry is at the window's end, not after it.
    expect((judge(500, job({ attempts: 20 }), at(3600_000)) as { nextAt: number }).nextAt).toBe(1000 + 3600_000);
  });

  it('the open circuit’s refusal names the last answer; no room: the job waits without an attempt (an older build’s a second)', () => {
    expect(judge('circuit_open', job({ lastError: 'HTTP 502' }), at(2000))).toMatchObject({ kind: 'retrying', error: 'HTTP 502 (circuit open)' });
    expect(judge('circuit_open', job({ lastError: 'HTTP 502 (circuit open)' }), at(2000))).toMatchObject({ error: 'HTTP 502 (circuit open)' });
    expect(judge('busy', job({ lastError: 'HTTP 502' }), at(2000))).toEqual({ kind: 'busy', waitUntil: 2000, reason: 'HTTP 502' });
    expect(judge('busy', job({ key: `evt_1:${url}` }), at(2000))).toMatchObject({ kind: 'busy', waitUntil: 3000 });
  });
});
