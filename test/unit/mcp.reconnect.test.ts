// Issue 37: an MCP server that cannot be reached is tried again with backoff (0.5 s doubling to 30 s) on the injected
// clock; the real stdio transport spawns a command that does not exist each time.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { McpServerSchema } from '../../src/config/mcp-schema.ts';
import { createLogger } from '../../src/logger.ts';
import { createMcpServer } from '../../src/mcp/server.ts';
import { createTransport } from '../../src/mcp/transport.ts';
import { until } from '../support/mcp.ts';

describe('MCP reconnection', () => {
  it('retries after 0.5, 1, 2, 4, 8, 16, 30, 30 s; calls meanwhile fail at once as disconnected; stop ends the retries', async () => {
    const clock = createManualClock(1_000_000);
    let attempts = 0;
    const server = createMcpServer({
      config: McpServerSchema.parse({ id: 'ghost', command: '/nonexistent/mcp-server' }),
      clock,
      logger: createLogger('silent'),
      version: 'test',
      onToolsChanged: () => undefined,
      makeTransport: (config, onStderr) => {
        attempts++;
        return createTransport(config, onStderr);
      },
    });
    server.start();
    expect(attempts).toBe(1);
    const failed = () => until(() => server.status().state === 'disconnected', 'the attempt to fail');
    await failed();
    expect(server.status()).toMatchObject({ connected: false, tools: 0, lastError: expect.stringContaining('ENOENT') });
    for (const [i, delay] of [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000].entries()) {
      clock.advance(delay - 1);
      expect(attempts, `before retry ${i + 1}`).toBe(i + 1);
      clock.advance(1);
      expect(attempts, `retry ${i + 1}`).toBe(i + 2);
      await failed();
    }
    expect(await server.call('anything', {}, 'inv-1')).toEqual({
      ok: false,
      error: { code: 'disconnected', message: expect.stringContaining('not connected') },
    });
    await server.stop();
    clock.advance(60_000);
    expect(attempts).toBe(9);
    expect(server.status().state).toBe('stopped');
  });
});
