// The PostgreSQL notice sender (src/store/postgres/notices.ts) around an injected statement runner: what it batches,
// what it drops, how it retries. The real statement on a real server: test/store/postgres.notices.test.ts.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createNoticeSender } from '../../src/store/postgres/notices.ts';
import type { Statement } from '../../src/store/postgres/db.ts';

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

function recording(fail = 0) {
  const sent: string[][] = [];
  let failures = fail;
  const run = (_s: Statement, [channels, payloads]: unknown[]) => {
    if (failures > 0) {
      failures--;
      return Promise.reject(new Error('the database is away'));
    }
    sent.push((channels as string[]).map((c, i) => `${c} ${(payloads as string[])[i]}`));
    return Promise.resolve();
  };
  return { sent, run };
}

describe('the PostgreSQL notice sender', () => {
  it('notices announced within a few milliseconds go out in one statement, each once', async () => {
    const r = recording();
    const notices = createNoticeSender({ run: r.run, clock: createManualClock() });
    notices.announce('jobs', '1:a');
    notices.announce('jobs', '2:a');
    notices.announce('jobs', '1:a');
    await tick();
    notices.announce('jobs', '3:b');
    await tick();
    expect(r.sent).toEqual([['jobs 1:a', 'jobs 2:a'], ['jobs 3:b']]);
  });

  it('while no other process listens nothing is sent; once one does, it is', async () => {
    const r = recording();
    const notices = createNoticeSender({ run: r.run, clock: createManualClock() });
    let others = false;
    notices.setAudience(() => others);
    notices.announce('jobs', '1:a');
    await tick();
    expect(r.sent).toEqual([]);
    others = true;
    notices.announce('jobs', '2:a');
    await tick();
    expect(r.sent).toEqual([['jobs 2:a']]);
  });

  it('a batch that fails is tried again a second later, three times in all, then dropped', async () => {
    const clock = createManualClock();
    const r = recording(3);
    const notices = createNoticeSender({ run: r.run, clock });
    notices.announce('jobs', '1:a');
    await tick();
    clock.advance(999);
    await tick();
    expect(r.sent).toEqual([]);
    clock.advance(1);
    await tick();
    clock.advance(1000);
    await tick();
    clock.advance(60_000);
    await tick();
    expect(r.sent).toEqual([]); // the third failure was the last attempt

    const again = recording(1);
    const retried = createNoticeSender({ run: again.run, clock });
    retried.announce('jobs', '2:a');
    await tick();
    clock.advance(1000);
    await tick();
    expect(again.sent).toEqual([['jobs 2:a']]);
  });

  it('close sends what is waiting at once and tries nothing again', async () => {
    const clock = createManualClock();
    const r = recording();
    const notices = createNoticeSender({ run: r.run, clock });
    notices.announce('jobs', '1:a');
    await notices.close();
    expect(r.sent).toEqual([['jobs 1:a']]);

    const failing = recording(1);
    const closing = createNoticeSender({ run: failing.run, clock });
    closing.announce('jobs', '2:a');
    await closing.close();
    clock.advance(10_000);
    await tick();
    expect(failing.sent).toEqual([]);
  });
});
