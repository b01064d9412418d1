import { describe, expect, it } from 'vitest';
import { addLogSecrets, createLogger } from '../../src/logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('trace', { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines };
}

describe('logger redaction', () => {
  it('replaces secrets at the top of a logged object and one level down, and in request headers', () => {
    const { logger, lines } = capture();
    const config = { secret: 's3cr3t', port: 3000 };
    logger.info(
      {
        token: 't0k3n',
        config,
        whatsapp: { app_secret: 'app', verify_token: 'vt', phone_id: '123' },
        req: { headers: { authorization: 'Bearer abc', 'x-service-secret': 'xs', accept: '*/*' } },
      },
      'hello',
    );
    const line = lines[0] as Record<string, any>;
    expect(line.token).toBe('[redacted]');
    expect(line.config).toEqual({ secret: '[redacted]', port: 3000 });
    expect(line.whatsapp).toEqual({ app_secret: '[redacted]', verify_token: '[redacted]', phone_id: '123' });
    expect(line.req.headers).toEqual({ authorization: '[redacted]', 'x-service-secret': '[redacted]', accept: '*/*' });
    // The caller's objects are untouched.
    expect(config.secret).toBe('s3cr3t');
    const raw = JSON.stringify(lines);
    for (const s of ['s3cr3t', 't0k3n', '"app"', 'vt', 'Bearer abc', '"xs"']) expect(raw.includes(s), s).toBe(false);
  });

  it('child bindings are written as given; errors keep their message and stack', () => {
    const { logger, lines } = capture();
    const child = logger.child({ reqId: 'req-7', component: 'http' });
    child.warn({ err: new Error('boom') }, 'failed');
    const line = lines[0] as Record<string, any>;
    expect(line.reqId).toBe('req-7');
    expect(line.component).toBe('http');
    expect(line.err.message).toBe('boom');
    expect(line.err.stack).toContain('Error: boom');
  });

  it('an instance with a secret field keeps its prototype (serializers see what they expect)', () => {
    const { logger, lines } = capture();
    const err = Object.assign(new Error('with token'), { token: 'leak-me' });
    logger.error({ err }, 'failed');
    const line = lines[0] as Record<string, any>;
    expect(line.err.message).toBe('with token');
    expect(line.err.token).toBe('[redacted]');
    expect(JSON.stringify(lines).includes('leak-me')).toBe(false);
  });
});

// Issue 15 part 5.
describe('log lines stay small and clean', () => {
  it('a line carrying a huge client string is cut: each string to 1 KiB, lists and objects to 32 entries', () => {
    const { logger, lines } = capture();
    const raw: string[] = [];
    const l = createLogger('info', { write: (s: string) => void raw.push(s) });
    const huge = 'A'.repeat(900 * 1024);
    for (const target of [logger, l]) {
      target.warn(
        {
          code: 'x',
          message: huge,
          list: Array.from({ length: 1000 }, (_, i) => `item-${i}`),
          deep: { a: { b: { c: { d: { e: { f: { g: { h: { i: 'deep' } } } } } } } } },
        },
        huge,
      );
    }
    expect(raw[0].length).toBeLessThan(16 * 1024);
    expect(raw[0].endsWith('\n')).toBe(true);
    const line = lines[0] as Record<string, any>;
    expect(line.message).toBe(`${'A'.repeat(1024)}…[${900 * 1024 - 1024} more characters cut]`);
    expect(line.msg).toMatch(/^A{1024}…\[\d+ more characters cut\]$/);
    expect(line.list).toHaveLength(33);
    expect(line.list.at(-1)).toBe('…[968 more items cut]');
    expect(JSON.stringify(line.deep)).toContain('[cut: nested too deep]');
    expect(line).toMatchObject({ level: 40, service: 'parley', code: 'x' });
  });

  it('a line under the bound is written unchanged', () => {
    const raw: string[] = [];
    const l = createLogger('info', { write: (s: string) => void raw.push(s) });
    const text = 'B'.repeat(4000);
    l.info({ text }, 'fine');
    expect(JSON.parse(raw[0]).text).toBe(text);
  });

  it('configured secrets are replaced by value anywhere in a line: messages, errors, stacks, URLs, children', () => {
    const raw: string[] = [];
    const logger = createLogger('trace', { write: (s: string) => void raw.push(s) });
    const token = 'EAAG-whatsapp-token-0123456789';
    const quoted = 'svc"secret\\with-quotes-0123';
    addLogSecrets(logger, [token, quoted, 'short', '']);
    const child = logger.child({ component: 'x' });
    child.error({ err: new Error(`Invalid OAuth access token - Cannot parse access token: ${token}`) }, 'graph said no');
    child.warn(
      { url: `https://graph.example/v21.0/me?access_token=${encodeURIComponent(token)}`, body: JSON.stringify({ secret: quoted }) },
      `upstream: ${token}`,
    );
    child.info({ note: `quoted ${quoted}` }, 'plain');
    const all = raw.join('');
    expect(all).not.toContain(token);
    expect(all).not.toContain('EAAG-whatsapp');
    expect(all).not.toContain('with-quotes-0123');
    expect(raw).toHaveLength(3);
    for (const line of raw) expect(line).toContain('[redacted]');
    const first = JSON.parse(raw[0]);
    expect(first.err.message).toBe('Invalid OAuth access token - Cannot parse access token: [redacted]');
    // Values under 8 characters are not scrubbed by value (too likely to be ordinary text).
    child.info('a short word');
    expect(JSON.parse(raw[3]).msg).toBe('a short word');
  });
});
