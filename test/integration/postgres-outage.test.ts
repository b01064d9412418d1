// Issue 16 part 7, black-box: Parley as a real child process on `storage.engine: postgres`, with a real PostgreSQL
// server of this file's own that goes away in the middle of traffic (an immediate shutdown, or SIGSTOP: a server that
// hangs) and comes back on the same port and data. While it is away: webhooks get 503 with an error body (never 500,
// never more than 10 s), widget messages an `unavailable` frame and no ack, /ready 503 naming checks.database. Once it
// is back, with no restart of Parley: /ready is ready by itself, every acknowledged message is answered exactly once,
// and new messages are answered. No unhandled rejection, and the process lives.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trackChild } from '../support/child-processes.ts';
import { stringify } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { startFakeGraph, type FakeGraph } from '../support/fake-graph.ts';
import { spawnParley, tempDir, TEST_SECRET, testConfig, type ParleyProcess } from '../support/parley.ts';
import { startCutProxy } from '../support/pg-cut-proxy.ts';
import { pickPostgresPort } from '../support/postgres-port.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { connectWidget, type WidgetClient } from '../support/widget-client.ts';
import { postWebhook, sleep, textMessage, WA, webhookBody } from '../support/whatsapp.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.close();
});

const WEBHOOK_BOUND_MS = 10_000;
const answeredWamid = (callbackData: string | undefined) => /:wa:(.+):r$/.exec(callbackData ?? '')?.[1];

async function startOnPostgres(graph: FakeGraph): Promise<ParleyProcess> {
  const url = await server.createDatabase();
  const parley = await spawnParley({
    storagePath: tempDir(),
    config: {
      storage: { engine: 'postgres', url },
      channels: { web: { rate_limit_per_minute: 100_000 }, whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA } },
    },
  });
  cleanups.push(() => parley.kill());
  graph.sendStatusesTo(`${parley.url}/wa/webhook`, WA.app_secret);
  return parley;
}

/** Widgets and signed webhooks sending all the time, keeping what was acknowledged and what was answered. */
async function startTraffic(parley: ParleyProcess, tag: string, widgetCount = 4) {
  const widgets: WidgetClient[] = [];
  const ackedWidget = new Set<string>();
  const repliesLive = new Map<string, number>();
  const widgetErrors: string[] = [];
  for (let i = 0; i < widgetCount; i++) {
    const w = await connectWidget(parley.url);
    cleanups.push(() => w.close());
    w.send({ type: 'init', customerId: `${tag}${i}`, email: `${tag}${i}@example.com` });
    await w.next((f) => f.type === 'ready');
    w.socket.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.type === 'ack') ackedWidget.add(`conv_web_${tag}${i}:${f.id}`);
      if (f.type === 'error') widgetErrors.push(f.code);
      if (f.type === 'message' && f.role === 'assistant') repliesLive.set(f.id, (repliesLive.get(f.id) ?? 0) + 1);
    });
    widgets.push(w);
  }
  const statuses = new Map<number, number>();
  const ackedWa = new Set<string>();
  /** Webhooks answered 503: Meta sends them again later. */
  const refused: { id: string }[][] = [];
  const slowest = { ms: 0 };
  let round = 0;
  const phone = (k: number) => `+1555400${String(k).padStart(4, '0')}`;

  /** One round: a message from every widget, and one webhook of 4 messages. Resolves to the webhook's status. */
  const step = async (): Promise<number> => {
    const r = round++;
    widgets.forEach((w, i) => w.send({ type: 'message', id: `${tag}m${r}`, text: `what is the status of order ${1000 + r}? (customer ${i})` }));
    const msgs = Array.from({ length: 4 }, (_, k) => textMessage(phone(k), `hello ${r}`, `wamid.${tag}.${k}.${r}`));
    const started = Date.now();
    const res = await postWebhook(parley.url, webhookBody(msgs));
    slowest.ms = Math.max(slowest.ms, Date.now() - started);
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status === 200) for (const m of msgs) ackedWa.add(m.id);
    else {
      refused.push(msgs);
      expect(res.status, `webhook status (round ${r})`).toBe(503);
      expect((await res.json()).error).toMatchObject({ code: 'unavailable', message: expect.any(String) });
    }
    return res.status;
  };

  return {
    step,
    statuses,
    ackedWa,
    ackedWidget,
    widgetErrors,
    slowest,
    /** Meta's retries of every refused webhook: now acknowledged, so each must be answered exactly once. */
    async redeliverRefused() {
      for (const msgs of refused.splice(0)) {
        const res = await postWebhook(parley.url, webhookBody(msgs));
        expect(res.status, 'a redelivered webhook').toBe(200);
        for (const m of msgs) ackedWa.add(m.id);
      }
    },
    /** Until /ready is 200 and every acknowledged message has its one answer (WhatsApp through the Graph API). */
    async settled(graph: FakeGraph, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const ready = await fetch(`${parley.url}/ready`);
        const answered = new Set(graph.delivered().map((d) => answeredWamid(d.body?.biz_opaque_callback_data)));
        const missingWa = [...ackedWa].filter((id) => !answered.has(id));
        const missingWidget = [...ackedWidget].filter((id) => !repliesLive.has(`${id}:r`));
        if (ready.status === 200 && missingWa.length === 0 && missingWidget.length === 0) return;
        expect(
          Date.now(),
          `not settled: ready ${ready.status} ${await ready.text()}; unanswered: ${missingWa.length} WhatsApp, ${missingWidget.length} widget ` +
            `${JSON.stringify([...missingWa, ...missingWidget])}\nParley's warnings and errors:\n${notableLines(parley)}`,
        ).toBeLessThan(end);
        await sleep(250);
      }
    },
    /** Every acknowledged message answered exactly once; nothing sent twice. */
    checkExactlyOnce(graph: FakeGraph) {
      const perWamid = new Map<string, number>();
      const perCallback = new Map<string, number>();
      for (const d of graph.delivered()) {
        const cb = d.body.biz_opaque_callback_data as string;
        perCallback.set(cb, (perCallback.get(cb) ?? 0) + 1);
        const id = answeredWamid(cb);
        if (id) perWamid.set(id, (perWamid.get(id) ?? 0) + 1);
      }
      expect(
        [...perCallback].filter(([, n]) => n > 1),
        'a WhatsApp reply delivered twice',
      ).toEqual([]);
      expect(
        [...ackedWa].filter((id) => perWamid.get(id) !== 1),
        'acknowledged WhatsApp messages not answered exactly once',
      ).toEqual([]);
      expect(
        [...ackedWidget].filter((id) => repliesLive.get(`${id}:r`) !== 1),
        'acknowledged widget messages not answered exactly once',
      ).toEqual([]);
      expect(
        [...repliesLive].filter(([, n]) => n > 1),
        'a widget reply sent twice',
      ).toEqual([]);
    },
  };
}

/** Parley's warn, error and fatal lines: what a failure message needs to be diagnosed. */
const notableLines = (parley: ParleyProcess) =>
  parley
    .output()
    .split('\n')
    .filter((l) => /"level":(40|50|60)/.test(l))
    .slice(-60)
    .join('\n');

function expectHealthyProcess(parley: ParleyProcess) {
  expect(parley.child.exitCode, `the process is alive:\n${parley.output().slice(-3000)}`).toBeNull();
  const out = parley.output();
  expect(out).not.toMatch(/unhandled rejection/);
  expect(out).not.toMatch(/uncaught/i);
  // An outage is the database's, not a request's: warn lines naming the cause, no error lines, no stacks.
  expect(out.split('\n').filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  expect(out).not.toMatch(/\\n\s+at /);
}

describe('PostgreSQL lost while Parley runs (a real server, stopped and started again)', () => {
  it('an immediate shutdown in the middle of traffic: 503s, unavailable frames, /ready names checks.database; once it is back, ready by itself and every acknowledged message answered exactly once', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const parley = await startOnPostgres(graph);
    const traffic = await startTraffic(parley, 'pgi');

    for (let i = 0; i < 10; i++) expect(await traffic.step()).toBe(200);
    // Answered, so the pool holds idle connections (an idle one that breaks must not take the process down); Meta's
    // status webhooks are still coming in when the server goes, and the rounds go on.
    await traffic.settled(graph);
    // pg_ctl stop -m immediate: the postmaster gets SIGQUIT, every backend goes at once, no checkpoint.
    const stopping = server.kill('SIGQUIT');
    // Traffic goes on while it goes down and while it is away.
    const downSince = Date.now();
    while ((traffic.statuses.get(503) ?? 0) < 10) {
      expect(Date.now() - downSince, `no 503 yet: ${JSON.stringify([...traffic.statuses])}`).toBeLessThan(60_000);
      await traffic.step();
      await sleep(50);
    }
    await stopping;
    expect(traffic.slowest.ms, 'every webhook answered within 10 s').toBeLessThan(WEBHOOK_BOUND_MS + 500);
    // Down now: /ready says so once the store has met the closed server (on a busy machine, not always by the first
    // refused webhook, nor with the server's final refusal yet: it may still be shutting down then).
    let ready: { status: number; body: any } | undefined;
    await expect
      .poll(
        async () => {
          const r = await fetch(`${parley.url}/ready`);
          ready = { status: r.status, body: await r.json() };
          return `${ready.status} ${ready.body.checks?.database}`;
        },
        { timeout: 15_000 },
      )
      .toMatch(/^503 (unreachable|shutdown): (ECONNREFUSED|ECONNRESET|57P01|57P02|08006|connection_lost)/);
    expect(ready?.status).toBe(503);
    expect(ready?.body.status).toBe('not_ready');
    expect(ready?.body.checks.database).toMatch(/^(unreachable|shutdown): (ECONNREFUSED|ECONNRESET|57P01|57P02|08006|connection_lost)/);
    expect(ready?.body.error.message).toMatch(/^database: /);
    await expect.poll(() => traffic.widgetErrors, { message: 'widget messages refused while it is away', timeout: 15_000 }).toContain('unavailable');
    expect(
      traffic.widgetErrors.filter((c) => c !== 'unavailable'),
      'only unavailable frames',
    ).toEqual([]);

    await server.restart();
    await traffic.settled(graph);
    await traffic.redeliverRefused();
    // New messages after the recovery are answered too.
    for (let i = 0; i < 3; i++) expect(await traffic.step()).toBe(200);
    await traffic.settled(graph);
    await sleep(1000); // a late duplicate would show now
    traffic.checkExactlyOnce(graph);
    expect(traffic.ackedWa.size).toBeGreaterThan(0);
    // Telemetry that met the outage (a flush fell inside it: usual, not certain) waited in memory and was written
    // once the server was back.
    if (/"msg":"telemetry waits for the store/.test(parley.output())) {
      expect(parley.output()).toMatch(/"msg":"telemetry is written again; nothing was lost"/);
    }
    expectHealthyProcess(parley);
  }, 180_000);
});

describe('PostgreSQL hanging while Parley runs (SIGSTOP: connections open, nothing answers)', () => {
  it('every webhook is answered 503 within 10 s and widget messages get an unavailable frame; /ready answers at once and names the timeout; after SIGCONT everything resumes', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const parley = await startOnPostgres(graph);
    const traffic = await startTraffic(parley, 'pgh', 2);
    for (let i = 0; i < 6; i++) expect(await traffic.step()).toBe(200);

    await server.kill('SIGSTOP');
    cleanups.push(() => server.kill('SIGCONT'));
    // Three rounds at once, and one more after them: none may wait on the silent server past the bound.
    const started = Date.now();
    const statuses = await Promise.all([traffic.step(), traffic.step(), traffic.step()]);
    expect(statuses).toEqual([503, 503, 503]);
    expect(await traffic.step()).toBe(503);
    expect(traffic.slowest.ms, 'every webhook answered within 10 s').toBeLessThan(WEBHOOK_BOUND_MS + 1000);
    const asked = Date.now();
    const ready = await fetch(`${parley.url}/ready`);
    expect(Date.now() - asked, '/ready does not wait for the database').toBeLessThan(3000);
    expect(ready.status).toBe(503);
    expect((await ready.json()).checks.database).toMatch(/^timeout: /);
    // The widgets' error frames follow their own 10 s bound (the elapsed time is checked below): wait for them.
    await expect
      .poll(() => traffic.widgetErrors.filter((c) => c === 'unavailable').length, { message: 'widget messages refused', timeout: 15_000 })
      .toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(40_000);

    await server.kill('SIGCONT');
    await traffic.settled(graph);
    await traffic.redeliverRefused();
    for (let i = 0; i < 3; i++) expect(await traffic.step()).toBe(200);
    await traffic.settled(graph);
    await sleep(1000);
    traffic.checkExactlyOnce(graph);
    expectHealthyProcess(parley);
  }, 180_000);
});

/** src/main.ts as `npm start` runs it, on `storage.url`; its exit code, stdout and stderr, and how long it ran. */
interface MainRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  started: boolean;
}
function runMain(url: string, o: { onStdout?: (stdout: string) => void } = {}): Promise<MainRun> {
  const dir = tempDir();
  const config = testConfig({ storage: { engine: 'postgres', url }, logging: { level: 'info' } }, dir);
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, stringify(config));
  const begun = Date.now();
  const child = trackChild(
    spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'src/main.ts')], {
      cwd: PROJECT_ROOT,
      env: Object.assign({}, process.env, { SERVICE_CONFIG: configPath, SERVICE_SDK_SECRET: TEST_SECRET }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d.toString()));
  child.stderr!.on('data', (d) => (stderr += d.toString()));
  return new Promise((resolve) => {
    // Stopped once it is listening (a start that succeeded), or when it exits by itself.
    const check = () => {
      o.onStdout?.(stdout);
      if (/"url":"http/.test(stdout)) child.kill('SIGTERM');
    };
    child.stdout!.on('data', check);
    const guard = setTimeout(() => child.kill('SIGKILL'), 45_000); // a start that hangs fails the test, not its timeout
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr, ms: Date.now() - begun, started: /"url":"http/.test(stdout) });
    });
  });
}

describe('PostgreSQL unreachable when Parley starts', () => {
  it('nothing listening: after 10 s of retries, exit 1 with one line naming the URL (password masked) and the refusal; no stack', async () => {
    const port = await pickPostgresPort();
    const r = await runMain(`postgres://parley:s3cret-pw@127.0.0.1:${port}/parley`);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `parley: cannot start: cannot connect to PostgreSQL at postgres://parley:****@127.0.0.1:${port}/parley: connection refused: nothing is listening on 127.0.0.1:${port} (is PostgreSQL running, on that port?); tried for 10 s`,
    ]);
    expect(r.ms).toBeGreaterThanOrEqual(10_000);
    expect(r.ms).toBeLessThan(25_000);
    expect(r.stdout + r.stderr).not.toContain('s3cret-pw');
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at |\\n\s+at /);
  }, 60_000);

  it('a server that hangs (SIGSTOP): exit 1 with one line about the connection timeout, within 20 s', async () => {
    await server.kill('SIGSTOP');
    try {
      const r = await runMain(server.url);
      expect(r.code).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^parley: cannot start: cannot connect to PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:${server.port}/postgres: no answer from 127\\.0\\.0\\.1:${server.port} within the connection timeout`,
        ),
      );
      expect(r.ms).toBeLessThan(25_000);
      expect(r.stdout + r.stderr).not.toMatch(/\n\s+at |\\n\s+at /);
    } finally {
      await server.kill('SIGCONT');
    }
  }, 60_000);

  it('a server that comes up during the retries: Parley starts on it', async () => {
    const url = await server.createDatabase();
    await server.stop();
    // Brought back once Parley has found it away and is trying again.
    let restarted: Promise<void> | undefined;
    const r = await runMain(url, {
      onStdout: (out) => {
        if (!restarted && /PostgreSQL is not reachable yet/.test(out)) restarted = sleep(1000).then(() => server.restart());
      },
    });
    await restarted;
    expect(r.started, `it started:\n${r.stdout}\n${r.stderr}`).toBe(true);
  }, 60_000);
});

describe('PostgreSQL commits a write whose answer is lost (a proxy cuts the connection once the statement has run)', () => {
  it('a webhook whose queue insert committed unseen: 503, and Meta’s retry is answered, once; a send marker committed unseen does not hold the reply for the grace', async () => {
    const graph = await startFakeGraph();
    cleanups.push(() => graph.close());
    const proxy = await startCutProxy({ host: '127.0.0.1', port: server.port });
    cleanups.push(() => proxy.close());
    const parley = await spawnParley({
      storagePath: tempDir(),
      config: {
        storage: { engine: 'postgres', url: proxy.via(await server.createDatabase()) },
        channels: { whatsapp: { enabled: true, provider: 'meta', graph_url: graph.url, ...WA, uncertain_grace_ms: 60_000 } },
      },
    });
    cleanups.push(() => parley.kill());
    graph.sendStatusesTo(`${parley.url}/wa/webhook`, WA.app_secret);
    const answers = (wamid: string) => graph.delivered().filter((d) => answeredWamid(d.body?.biz_opaque_callback_data) === wamid).length;
    const answeredWithin = async (wamid: string, ms: number) => {
      const end = Date.now() + ms;
      while (answers(wamid) === 0 && Date.now() < end) await sleep(100);
      return answers(wamid);
    };

    // The inbound job is stored, but Parley never hears so: it answers 503, and Meta sends the message again.
    const first = webhookBody([textMessage('+15554100001', 'where is my order?', 'wamid.cut.in')]);
    const cut = proxy.cutAnswerTo(['parley_jobs_insert', 'wa-inbound']);
    const refused = await postWebhook(parley.url, first);
    await cut;
    expect(refused.status).toBe(503);
    expect((await refused.json()).error.code).toBe('unavailable');
    const retried = await postWebhook(parley.url, first);
    expect(retried.status).toBe(200);
    expect(await answeredWithin('wamid.cut.in', 20_000), 'the retried message is answered').toBe(1);

    // The reply's send marker is stored, but the send never went out: it goes on the next run, not after 60 s.
    const markerCut = proxy.cutAnswerTo(['parley_wa_put_attempt']);
    expect((await postWebhook(parley.url, webhookBody([textMessage('+15554100002', 'hello', 'wamid.cut.out')]))).status).toBe(200);
    await markerCut;
    expect(await answeredWithin('wamid.cut.out', 20_000), 'the reply is sent well within the grace').toBe(1);

    await sleep(1000);
    expect(answers('wamid.cut.in')).toBe(1);
    expect(answers('wamid.cut.out')).toBe(1);
    expectHealthyProcess(parley);
  }, 120_000);
});
