// The takeover sweep's log when a conversation cannot be taken over: an expected condition (the store away, the node
// rejoining after a lost lease) is one warn line without a stack, so a healthy outage leaves no stack trace behind
// (test/integration/postgres-outage.test.ts checks exactly that); anything else keeps its stack for debugging.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createTakeover } from '../../src/cluster/takeover.ts';
import { createLogger } from '../../src/logger.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';

function sweepWith(adoptError: Error) {
  const lines: Record<string, any>[] = [];
  const takeover = createTakeover({
    ownership: { orphaned: async () => [{ conversationId: 'c1', nodeId: 'gone', epoch: 1, waiting: true }], waitingOn: async () => [] },
    inbox: { unattended: async () => [], overdue: async () => [] },
    bus: { onResync: () => () => undefined },
    host: { adopt: () => Promise.reject(adoptError), drainInbox: async () => undefined, list: () => [], isActive: () => false, isResting: () => false },
    now: () => 0,
    status: () => 'member',
    nodeId: () => 'node-a',
    clock: createManualClock(0),
    logger: createLogger('warn', { write: (s: string) => void lines.push(JSON.parse(s)) }),
    everyMs: 1000,
  });
  return { lines, sweep: () => takeover.sweep() };
}

describe('takeover sweep logs', () => {
  it('a store that cannot serve the claim (not a member right now): one warn line, its code, no stack', async () => {
    const { lines, sweep } = sweepWith(new StoreUnavailableError('not_member', 'this node is not a member of the cluster right now'));
    await sweep();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      conversationId: 'c1',
      msg: 'could not take the conversation over',
      err: { message: 'this node is not a member of the cluster right now', code: 'not_member' },
    });
    expect(JSON.stringify(lines[0])).not.toMatch(/\\n\s+at /);
  });

  it('an unexpected failure keeps its stack', async () => {
    const { lines, sweep } = sweepWith(new TypeError('cannot read properties of undefined'));
    await sweep();
    expect(lines).toHaveLength(1);
    expect(lines[0].err.stack).toMatch(/TypeError: cannot read properties of undefined\n\s+at /);
  });
});
