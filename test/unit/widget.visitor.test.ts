// The widget's visitor memory (widget/src/visitor.ts): the token a `ready` brings is kept per Parley server and sent
// with the next `init`; a signed-in `ready` forgets it; storage that throws leaves the widget working without it.
import { describe, expect, it } from 'vitest';
import { visitorMemory } from '../../widget/src/visitor.ts';

function memoryStore() {
  const m = new Map<string, string>();
  return {
    m,
    store: { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k) },
  };
}

const ready = (visitorToken?: string) => ({
  type: 'ready' as const,
  customerId: 'c',
  conversationId: 'conv',
  history: [],
  ...(visitorToken ? { visitorToken } : {}),
});

describe('widget visitor memory', () => {
  it('keeps the token of a visitor ready, sends it with the next init, per server', () => {
    const { m, store } = memoryStore();
    const a = visitorMemory('https://a.example', store);
    expect(a.init({ type: 'init' })).toEqual({ type: 'init' });
    a.onFrame(ready('vt1.one.sig'), false);
    expect(a.init({ type: 'init', customerId: '', email: undefined })).toEqual({ type: 'init', visitorToken: 'vt1.one.sig' });
    a.onFrame(ready('vt1.two.sig'), false);
    expect(a.init({ type: 'init' })).toEqual({ type: 'init', visitorToken: 'vt1.two.sig' });
    expect(visitorMemory('https://b.example', store).init({ type: 'init' })).toEqual({ type: 'init' });
    expect([...m.keys()]).toEqual(['parley.visitor:https://a.example']);
  });

  it('sends it with a sign-in (to join the conversation) and forgets it after a signed-in ready', () => {
    const { store } = memoryStore();
    const v = visitorMemory('https://a.example', store);
    v.onFrame(ready('vt1.one.sig'), false);
    expect(v.init({ type: 'init', authToken: 'jwt.a.b' })).toEqual({ type: 'init', authToken: 'jwt.a.b', visitorToken: 'vt1.one.sig' });
    v.onFrame({ type: 'ack', id: 'x' }, true);
    expect(v.init({ type: 'init', authToken: 'jwt.a.b' })).toMatchObject({ visitorToken: 'vt1.one.sig' });
    v.onFrame(ready(), true);
    expect(v.init({ type: 'init', authToken: 'jwt.a.b', customerId: 'cus_1' })).toEqual({ type: 'init', authToken: 'jwt.a.b', customerId: 'cus_1' });
  });

  it('works without storage, and with storage that throws', () => {
    const throwing = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
      removeItem: () => {
        throw new Error('denied');
      },
    };
    for (const store of [undefined, throwing]) {
      const v = visitorMemory('https://a.example', store);
      v.onFrame(ready('vt1.one.sig'), false);
      expect(v.init({ type: 'init' })).toEqual({ type: 'init' });
    }
  });
});
