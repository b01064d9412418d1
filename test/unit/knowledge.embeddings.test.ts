// Issue 36, part 2: optional embeddings from an OpenAI-compatible endpoint (a local fake), stored with the chunks and
// merged with the keyword ranking by reciprocal rank fusion. Real LMDB store.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClock } from '../../src/clock.ts';
import { createEmbedder } from '../../src/knowledge/embeddings.ts';
import { createKnowledge, fuse } from '../../src/knowledge/service.ts';
import { openTestStore } from '../support/store.ts';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** Concepts the fake model knows: words that mean the same land on the same dimension. */
const CONCEPTS = [/refund|money back|reimburse/i, /deliver|shipping|parcel/i, /password|sign.?in|log.?in/i, /gift/i];

async function startFakeEmbeddings() {
  const seen: { model: string; input: string[]; authorization?: string }[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { model: string; input: string[] };
      seen.push({ model: body.model, input: body.input, authorization: req.headers.authorization });
      if (req.url !== '/v1/embeddings') {
        res.statusCode = 404;
        return void res.end();
      }
      const data = body.input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: CONCEPTS.map((c): number => (c.test(text) ? 1 : 0)).concat([0.01]),
      }));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', data: data.reverse(), model: body.model }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push({ close: () => new Promise((r) => server.close(r)) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

describe('knowledge embeddings', () => {
  it('vectors come from the endpoint, are stored with the chunks, and a question in other words finds the article through them', async () => {
    const fake = await startFakeEmbeddings();
    const store = await openTestStore();
    open.push(store);
    const embedder = createEmbedder({ baseUrl: fake.url, model: 'tiny-embed', apiKey: 'sk-test-key', timeoutMs: 5000 });
    const hybrid = createKnowledge({ store: store.knowledge, clock: createClock(), embedder });
    const keywordOnly = createKnowledge({ store: store.knowledge, clock: createClock() });

    await hybrid.upsert({ id: 'refunds', title: 'Refunds', body: '# Refunds\n\nWe reimburse your card within five days.', format: 'markdown' });
    await hybrid.upsert({ id: 'shipping', title: 'Shipping', body: '# Shipping\n\nParcels arrive in three days.', format: 'markdown' });
    await hybrid.upsert({ id: 'gifts', title: 'Gift cards', body: 'Gift cards never expire.', format: 'text' });
    expect(fake.seen[0]).toMatchObject({ model: 'tiny-embed', authorization: 'Bearer sk-test-key' });
    expect(fake.seen[0].input[0]).toContain('Refunds');

    // "money back" shares no word with the refunds article: keyword search cannot find it, the vectors do.
    expect((await keywordOnly.search('money back please')).map((h) => h.articleId)).not.toContain('refunds');
    const hits = await hybrid.search('money back please');
    expect(hits[0].articleId).toBe('refunds');
    // Both rankings agree on the shipping article: it gets both reciprocal ranks.
    const both = await hybrid.search('when will my parcel arrive');
    expect(both[0].articleId).toBe('shipping');
    expect(both[0].score).toBeCloseTo(2 / 61, 6);
  });

  it('an endpoint that fails leaves the article stored without vectors and search on keywords', async () => {
    const store = await openTestStore();
    open.push(store);
    const embedder = createEmbedder({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 1000 });
    const k = createKnowledge({ store: store.knowledge, clock: createClock(), embedder });
    await k.upsert({ id: 'a', title: 'Returns', body: 'Thirty days to return.', format: 'text' });
    expect((await k.search('return thirty'))[0].articleId).toBe('a');
  });

  it('fuse adds 1/(60+rank) over the lists a chunk is in', () => {
    const h = (chunkId: string) => ({ chunkId, articleId: chunkId, title: '', heading: '', text: '', score: 9 });
    const merged = fuse(
      [
        [h('a'), h('b')],
        [h('b'), h('c')],
      ],
      5,
    );
    expect(merged.map((x) => x.chunkId)).toEqual(['b', 'a', 'c']);
    expect(merged[0].score).toBeCloseTo(1 / 62 + 1 / 61, 9);
    expect(merged[1].score).toBeCloseTo(1 / 61, 9);
  });
});
