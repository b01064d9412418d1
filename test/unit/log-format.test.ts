// Issue 21: readable logs in a terminal (pino-pretty), JSON lines otherwise; LOG_FORMAT decides when set.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, logDestination } from '../../src/log-format.ts';
import { addLogSecrets, createLogger } from '../../src/logger.ts';

describe('log format', () => {
  it('pretty in a terminal, JSON otherwise; LOG_FORMAT overrides', async () => {
    expect(chooseLogFormat(true, {})).toBe('pretty');
    expect(chooseLogFormat(false, {})).toBe('json');
    expect(chooseLogFormat(true, { LOG_FORMAT: 'json' })).toBe('json');
    expect(chooseLogFormat(false, { LOG_FORMAT: 'pretty' })).toBe('pretty');
    expect(chooseLogFormat(false, { LOG_FORMAT: 'weird' })).toBe('json');
    expect(await logDestination('json')).toBeUndefined();
  });

  it('pretty lines are for people: level word, message, fields; secrets still redacted', async () => {
    let out = '';
    const sink = new Writable({
      write(chunk, _enc, cb) {
        out += chunk;
        cb();
      },
    });
    const logger = createLogger('info', await logDestination('pretty', sink));
    logger.info({ url: 'http://127.0.0.1:3000', secret: 'hunter2-very-secret' }, 'parley listening');
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: parley listening/);
    expect(out).toContain('url: "http://127.0.0.1:3000"');
    expect(out).not.toContain('hunter2');
    expect(() => JSON.parse(out)).toThrow();
  });

  it('pretty lines are scrubbed by value too: a configured secret quoted in a message or a field', async () => {
    let out = '';
    const sink = new Writable({
      write(chunk, _enc, cb) {
        out += chunk;
        cb();
      },
    });
    const logger = createLogger('info', await logDestination('pretty', sink));
    addLogSecrets(logger, ['wa-token-0123456789']);
    logger.child({ component: 'whatsapp' }).error({ detail: 'Graph said: bad token wa-token-0123456789' }, 'send failed for wa-token-0123456789');
    expect(out).toContain('ERROR: send failed for [redacted]');
    expect(out).toContain('Graph said: bad token [redacted]');
    expect(out).not.toContain('wa-token-0123456789');
  });
});
