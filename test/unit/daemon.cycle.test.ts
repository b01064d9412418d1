// The reflection cycle against a real LMDB, the real offline LLM, the real
// proactive service and ledger, with a manual clock: selection (idle_minutes,
// max_per_cycle), the guardrails on follow-ups, and crash safety.
import { afterEach, describe, expect, it } from 'vitest';
import { BLOCK_REASONS } from '../../machines/proactive.ts';
import { MAX_FOLLOWUP_ATTEMPTS, MAX_REVIEW_ATTEMPTS } from '../../src/daemon/reflection.ts';
import { createOfflineProvider } from '../../src/llm/offline.ts';
import { createResilientLlm } from '../../src/llm/resilient.ts';
import { LlmError } from '../../src/llm/types.ts';
import type { LlmProvider } from '../../src/llm/types.ts';
import { ProactiveUnavailableError } from '../../src/proactive/service.ts';
import { closeReflectionEnvs, reflectionEnv } from '../support/reflection.ts';

const MIN = 60_000;

afterEach(closeReflectionEnvs);

const env = reflectionEnv;

{
  const envFor = env;

  describe('reflection cycle (review index kept by the host)', () => {
    describe('which conversations are reviewed', () => {
      it('idle_minutes: a conversation younger than that is not reviewed', async () => {
        const e = await envFor({ idleMinutes: 30 });
        const old = await e.conversation('old', { agoMs: 31 * MIN });
        const young = await e.conversation('young', { agoMs: 29 * MIN });
        expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
        expect((await e.record(old.id))?.reflection?.verdict).toBe('resolved');
        expect((await e.record(young.id))?.reflection).toBeUndefined();
        e.clock.advance(MIN);
        expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
        expect((await e.record(young.id))?.reflection?.verdict).toBe('resolved');
      });

      it('max_per_cycle: N+1 idle conversations → N reviews in one cycle, the last one next cycle', async () => {
        const e = await envFor({ maxPerCycle: 2 });
        for (const id of ['a', 'b', 'c']) await e.conversation(id);
        expect(await e.runCycle()).toMatchObject({ reviewed: 2 });
        expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
        expect(await e.runCycle()).toMatchObject({ reviewed: 0 });
        expect(e.ofType('daemon.verdict')).toHaveLength(3);
      });
    });

    describe('follow-ups', () => {
      it('an opted-in customer already at the cap: the follow-up is blocked "Daily proactive limit reached" and not retried', async () => {
        const e = await envFor({ dailyCap: 1 });
        const c = await e.conversation('capped', { unanswered: true });
        // An earlier accepted proactive message (on the ledger only, so the transcript stays unresolved).
        expect((await e.ledger.reserve({ customerId: c.customerId, channel: 'web', hasTemplate: false })).ok).toBe(true);
        expect(await e.runCycle()).toEqual({ reviewed: 1, followups: 0 });
        expect(e.ofType('daemon.followup', c.id).map((x) => x.data.reason)).toEqual([BLOCK_REASONS.cap]);
        expect(e.ofType('proactive.blocked').map((x) => x.data)).toEqual([
          expect.objectContaining({ reason: BLOCK_REASONS.cap, dedupKey: `followup:${c.id}` }),
        ]);
        expect((await e.record(c.id))?.followupPending).toBeUndefined();
        await e.runCycle();
        expect(e.ofType('daemon.followup', c.id)).toHaveLength(1);
      });

      it('a follow-up decided but not yet sent is dropped, unsent, when the customer wrote again meanwhile', async () => {
        let fail = true;
        const e = await envFor({ send: (real) => (req) => (fail ? Promise.reject(new ProactiveUnavailableError('store busy')) : real(req)) });
        const c = await e.conversation('back', { unanswered: true });
        await e.runCycle();
        expect((await e.record(c.id))?.followupPending).toMatchObject({ attempts: 1 });
        e.clock.advance(MIN);
        await e.customerWrites(c.id);
        fail = false;
        await e.runCycle();
        expect((await e.record(c.id))?.followupPending).toBeUndefined();
        expect(e.ofType('proactive.accepted')).toHaveLength(0);
        expect(e.ofType('daemon.followup', c.id).at(-1)?.data).toMatchObject({ accepted: false, dropped: 'the customer wrote again' });
      });

      it('a non-guardrail failure keeps the follow-up and retries it; it gives up after the bound (logged in telemetry)', async () => {
        let calls = 0;
        const e = await envFor({ send: () => () => (calls++, Promise.reject(new ProactiveUnavailableError('store busy'))) });
        const c = await e.conversation('flaky', { unanswered: true });
        for (let i = 0; i < MAX_FOLLOWUP_ATTEMPTS + 2; i++) await e.runCycle();
        expect(calls).toBe(MAX_FOLLOWUP_ATTEMPTS);
        expect((await e.record(c.id))?.followupPending).toBeUndefined();
        expect(e.ofType('daemon.gave_up', c.id).map((x) => x.data)).toEqual([
          expect.objectContaining({ what: 'followup', attempts: MAX_FOLLOWUP_ATTEMPTS, error: 'store busy' }),
        ]);
      });

      it('a record without an externalId drops its follow-up at once instead of being rescanned forever', async () => {
        const e = await envFor();
        const c = await e.conversation('anon', { unanswered: true, noExternalId: true });
        await e.runCycle();
        expect((await e.record(c.id))?.followupPending).toBeUndefined();
        expect(e.ofType('daemon.followup', c.id).map((x) => x.data.dropped)).toEqual(['no customer externalId']);
      });
    });

    describe('crash safety', () => {
      it('a crash after the follow-up was sent (before it was cleared): the next cycle sends nothing — one verdict, one accepted', async () => {
        let crash = true;
        const e = await envFor({
          send: (real) => async (req) => {
            const r = await real(req);
            if (crash) throw new Error('process died after the send');
            return r;
          },
        });
        const c = await e.conversation('once', { unanswered: true });
        await e.runCycle();
        crash = false;
        expect((await e.record(c.id))?.followupPending).toBeDefined();
        await e.runCycle();
        await e.runCycle();
        expect(e.ofType('daemon.verdict', c.id)).toHaveLength(1);
        expect(e.ofType('proactive.accepted')).toHaveLength(1);
        expect(e.ofType('proactive.blocked').map((x) => x.data.reason)).toEqual([BLOCK_REASONS.duplicate]);
        expect(await e.ledger.sentInWindow(c.customerId)).toBe(1);
        expect((await e.record(c.id))?.followupPending).toBeUndefined();
      });

      it('a crash after the LLM call (before the verdict was stored): reviewed again, one verdict; a review that keeps failing stops after the bound', async () => {
        const offline = createOfflineProvider();
        let calls = 0;
        let failUntil = 1;
        const llm: LlmProvider = {
          ...offline,
          complete: async (req) => {
            const res = await offline.complete(req);
            if (++calls <= failUntil) throw new Error('process died before the verdict was written');
            return res;
          },
        };
        const e = await envFor({ llm });
        const c = await e.conversation('again', { unanswered: true });
        expect(await e.runCycle()).toMatchObject({ reviewed: 0 });
        expect((await e.record(c.id))?.reviewAttempt).toMatchObject({ attempts: 1 });
        expect(await e.runCycle()).toMatchObject({ reviewed: 1, followups: 1 });
        await e.runCycle();
        expect(calls).toBe(2);
        expect(e.ofType('daemon.verdict', c.id)).toHaveLength(1);
        expect(e.ofType('proactive.accepted')).toHaveLength(1);

        failUntil = Infinity;
        const d = await e.conversation('never', { unanswered: true });
        calls = 0;
        for (let i = 0; i < MAX_REVIEW_ATTEMPTS + 2; i++) await e.runCycle();
        expect(calls).toBe(MAX_REVIEW_ATTEMPTS);
        expect(e.ofType('daemon.verdict', d.id)).toHaveLength(0);
        expect(e.ofType('daemon.gave_up', d.id).map((x) => x.data.what)).toEqual(['review']);
      });
    });
  });
}

describe('reflection LLM calls in telemetry', () => {
  it('a failed attempt and the fallback that answered are two turn-calls of the review', async () => {
    const down: LlmProvider = {
      name: 'primary',
      model: 'down-1',
      complete: async () => {
        throw new LlmError('http_503', 'HTTP 503 from the provider', 'primary');
      },
    };
    const e = await env({ llm: createResilientLlm({ primary: down, fallback: createOfflineProvider(), retries: 1 }) });
    const c = await e.conversation('flaky', { unanswered: true });
    expect(await e.runCycle()).toMatchObject({ reviewed: 1 });
    const calls = e.turnCalls.filter((t) => t.conversationId === c.id && t.purpose === 'reflection');
    expect(calls.map((t) => [t.provider, t.ok])).toEqual([
      ['primary', false],
      ['primary', false],
      ['offline', true],
    ]);
    expect(new Set(calls.map((t) => t.turnId)).size).toBe(1);
  });
});
