import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';

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
