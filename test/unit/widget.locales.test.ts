// Fetching a language's table (widget/src/locales.ts) with an injected fetch and timer: the table, or undefined and
// one warning (a failed request, something that is not a table, the deadline passed; a late answer changes nothing);
// its URL beside widget.js; and the handle `init` returns meanwhile (widget/src/deferred-handle.ts).
import { describe, expect, it } from 'vitest';
import { deferredHandle } from '../../widget/src/deferred-handle.ts';
import { LOCALE_DEADLINE_MS, loadLocale, localeUrl } from '../../widget/src/locales.ts';
import type { WidgetHandle } from '../../widget/src/index.ts';

/** A fetch answered by hand, and a timer fired by hand. */
function harness() {
  const asked: { url: string; init?: RequestInit; answer: (r: Response) => void; fail: (e: Error) => void }[] = [];
  const timers: { fn: () => void; ms: number; cleared: boolean }[] = [];
  const warnings: string[] = [];
  const fetch = ((url: string, init?: RequestInit) =>
    new Promise<Response>((answer, fail) => asked.push({ url, init, answer, fail }))) as unknown as typeof globalThis.fetch;
  const setTimer = (fn: () => void, ms: number) => timers.push({ fn, ms, cleared: false }) - 1;
  const clearTimer = (i: unknown) => void (timers[i as number].cleared = true);
  const load = () => loadLocale('https://p.example/widget-locale-es.json', 'es', { fetch, setTimer, clearTimer, warn: (l) => warnings.push(l) });
  return { asked, timers, warnings, load };
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('loadLocale', () => {
  it('the table, fetched without cookies; the deadline timer cleared; no warning', async () => {
    const h = harness();
    const table = h.load();
    expect(h.asked[0].init).toMatchObject({ mode: 'cors', credentials: 'omit' });
    expect(h.timers[0].ms).toBe(LOCALE_DEADLINE_MS);
    h.asked[0].answer(json({ send: 'Enviar' }));
    expect(await table).toEqual({ send: 'Enviar' });
    expect(h.timers[0].cleared).toBe(true);
    expect(h.warnings).toEqual([]);
  });

  it('a 404, a network error, an array or null: undefined and one warning each', async () => {
    for (const outcome of [json({}, 404), new Error('Failed to fetch'), json(['x']), json(null)]) {
      const h = harness();
      const table = h.load();
      if (outcome instanceof Error) h.asked[0].fail(outcome);
      else h.asked[0].answer(outcome);
      expect(await table).toBeUndefined();
      expect(h.warnings).toHaveLength(1);
      expect(h.warnings[0]).toMatch(/^\[parley\] the widget's es strings .*: showing English$/);
    }
  });

  it('the deadline passed: undefined and one warning; the answer that comes later changes nothing', async () => {
    const h = harness();
    const table = h.load();
    h.timers[0].fn();
    expect(await table).toBeUndefined();
    expect((h.asked[0].init?.signal as AbortSignal).aborted).toBe(true);
    h.asked[0].answer(json({ send: 'Enviar' }));
    await new Promise((r) => setImmediate(r));
    expect(h.warnings).toEqual([`[parley] the widget's es strings did not load within ${LOCALE_DEADLINE_MS} ms: showing English`]);
  });
});

describe('localeUrl', () => {
  it('beside widget.js on the server, under its path if it has one', () => {
    expect(localeUrl('https://p.example', 'es', 'https://shop.example/')).toBe('https://p.example/widget-locale-es.json');
    expect(localeUrl('https://p.example/chat/?x=1#y', 'he', 'https://shop.example/')).toBe('https://p.example/chat/widget-locale-he.json');
    expect(localeUrl('/parley', 'de', 'https://shop.example/a/b')).toBe('https://shop.example/parley/widget-locale-de.json');
  });
});

describe('the handle before the widget is there', () => {
  const fake = () => {
    const calls: string[] = [];
    const handle: WidgetHandle = {
      open: () => calls.push('open'),
      close: () => calls.push('close'),
      send: (t) => calls.push(`send ${t}`),
      setAuthToken: (t) => calls.push(`token ${t}`),
      destroy: () => calls.push('destroy'),
    };
    return { calls, handle };
  };

  it('what the page asked meanwhile is done in order once it starts; then calls go straight through', () => {
    const later = deferredHandle();
    later.handle.open();
    later.handle.send('hola');
    later.handle.setAuthToken('t2');
    const real = fake();
    later.attach(() => real.handle);
    expect(real.calls).toEqual(['open', 'send hola', 'token t2']);
    later.handle.close();
    later.handle.destroy();
    expect(real.calls.slice(3)).toEqual(['close', 'destroy']);
  });

  it('destroyed before it started: it never starts', () => {
    const later = deferredHandle();
    later.handle.open();
    later.handle.destroy();
    let started = false;
    later.attach(() => {
      started = true;
      return fake().handle;
    });
    expect(started).toBe(false);
  });
});
