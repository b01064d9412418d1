// Contract: KnowledgeStore (src/store/knowledge.ts), on every engine of engines.ts.
import { describe, expect, it } from 'vitest';
import { chunkIdOf, type KnowledgeArticle, type KnowledgeChunk } from '../../src/store/knowledge.ts';
import type { Store } from '../../src/store/repos.ts';
import { freshStore } from './contract.ts';
import { engines } from './engines.ts';

const article = (id: string, over: Partial<KnowledgeArticle> = {}): KnowledgeArticle =>
  Object.assign({ id, title: `Title ${id}`, body: 'body', format: 'markdown' as const, tags: [], origin: 'api', createdAt: 1, updatedAt: 2 }, over);

const chunk = (articleId: string, position: number, text: string, headingPath: string[] = [], embedding?: number[]): KnowledgeChunk => {
  const c: KnowledgeChunk = { chunkId: chunkIdOf(articleId, position), articleId, position, headingPath, text };
  if (embedding) c.embedding = embedding;
  return c;
};

export function describeKnowledgeContract(engine: string, open: () => Promise<Store>) {
  describe(`${engine}: knowledge`, () => {
    const store = freshStore(open);

    it('an article is stored, read back by id and by url, and listed in id order page by page', async () => {
      const k = store().knowledge;
      const a = article('b', { url: 'https://help.example.com/b', locale: 'en-GB', tags: ['x'], etag: '"v1"', lastModified: 'Tue, 01 Jan 2030 00:00:00 GMT' });
      await k.put(a, [chunk('b', 0, 'hello')]);
      await k.put(article('a'), [chunk('a', 0, 'hi')]);
      await k.put(article('c'), [chunk('c', 0, 'hey')]);
      expect(await k.get('b')).toEqual(a);
      expect(await k.byUrl('https://help.example.com/b')).toEqual(a);
      expect(await k.get('zz')).toBeUndefined();
      expect(await k.byUrl('https://nowhere.example.com/')).toBeUndefined();
      expect((await k.list({ limit: 2 })).map((x) => x.id)).toEqual(['a', 'b']);
      expect((await k.list({ after: 'b', limit: 2 })).map((x) => x.id)).toEqual(['c']);
      expect(await k.count()).toEqual({ articles: 3, chunks: 3 });
    });

    it('search ranks the chunk that matches more of the question first, with its article, heading path and a score', async () => {
      const k = store().knowledge;
      await k.put(article('returns', { title: 'Returns and refunds', url: 'https://help.example.com/returns' }), [
        chunk('returns', 0, 'You can return any item within 30 days of delivery for a full refund.', ['Returns', 'How long do I have']),
        chunk('returns', 1, 'Refunds reach your card within 5 business days.', ['Returns', 'Refund timing']),
      ]);
      await k.put(article('shipping', { title: 'Shipping times' }), [chunk('shipping', 0, 'Standard shipping takes 3 to 5 business days.', ['Shipping'])]);
      const hits = await k.search('how many days do I have to return an item?', { limit: 5 });
      expect(hits[0]).toMatchObject({
        chunkId: 'returns#0',
        articleId: 'returns',
        title: 'Returns and refunds',
        url: 'https://help.example.com/returns',
        heading: 'Returns › How long do I have',
      });
      expect(hits[0].text).toContain('30 days');
      expect(hits[0].score).toBeGreaterThan(0);
      expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((x, y) => y - x));
      expect(await k.search('zebra xylophone', { limit: 5 })).toEqual([]);
      expect(await k.search('the of and', { limit: 5 })).toEqual([]);
    });

    it('a replaced article loses its old chunks; a removed one is found no more', async () => {
      const k = store().knowledge;
      await k.put(article('p', { url: 'https://help.example.com/p' }), [
        chunk('p', 0, 'passwords are reset from the sign-in page'),
        chunk('p', 1, 'two factor codes'),
      ]);
      await k.put(article('p', { url: 'https://help.example.com/p2' }), [chunk('p', 0, 'invoices are sent by email every month')]);
      expect(await k.search('password reset', { limit: 5 })).toEqual([]);
      expect((await k.search('invoices email', { limit: 5 })).map((h) => h.chunkId)).toEqual(['p#0']);
      expect(await k.byUrl('https://help.example.com/p')).toBeUndefined();
      expect(await k.count()).toEqual({ articles: 1, chunks: 1 });
      expect(await k.remove('p')).toBe(true);
      expect(await k.remove('p')).toBe(false);
      expect(await k.search('invoices email', { limit: 5 })).toEqual([]);
      expect(await k.get('p')).toBeUndefined();
      expect(await k.byUrl('https://help.example.com/p2')).toBeUndefined();
      expect(await k.count()).toEqual({ articles: 0, chunks: 0 });
      // An in-memory index holds no chunk of a removed article (PostgreSQL's index is its table).
      const info = k.indexInfo();
      if (info.kind === 'bm25') expect(info.chunks).toBe(0);
    });

    it('a locale limits search to articles in that language and those without one', async () => {
      const k = store().knowledge;
      await k.put(article('en', { locale: 'en' }), [chunk('en', 0, 'delivery status tracking')]);
      await k.put(article('es', { locale: 'es-ES' }), [chunk('es', 0, 'delivery seguimiento del pedido')]);
      await k.put(article('none'), [chunk('none', 0, 'delivery information')]);
      const ids = async (locale?: string) => (await k.search('delivery', { locale, limit: 10 })).map((h) => h.articleId).sort();
      expect(await ids()).toEqual(['en', 'es', 'none']);
      expect(await ids('es')).toEqual(['es', 'none']);
      expect(await ids('en-US')).toEqual(['en', 'none']);
    });

    it('nearest ranks chunks with embeddings by cosine similarity, within the locale', async () => {
      const k = store().knowledge;
      await k.put(article('v1'), [chunk('v1', 0, 'a', [], [1, 0, 0]), chunk('v1', 1, 'b', [], [0.6, 0.8, 0])]);
      await k.put(article('v2', { locale: 'fr' }), [chunk('v2', 0, 'c', [], [0, 0, 1])]);
      await k.put(article('v3'), [chunk('v3', 0, 'no vector')]);
      const hits = await k.nearest([0.8, 0.6, 0], { limit: 5 });
      expect(hits.map((h) => h.chunkId)).toEqual(['v1#1', 'v1#0', 'v2#0']);
      expect(hits[0].score).toBeCloseTo(0.96, 5);
      expect(hits[1].score).toBeCloseTo(0.8, 5);
      expect((await k.nearest([0, 0, 1], { locale: 'de', limit: 5 })).map((h) => h.chunkId)).toEqual(['v1#0', 'v1#1']);
    });

    it("byOrigin lists a synced origin's articles with their validators", async () => {
      const k = store().knowledge;
      await k.put(article('s1', { origin: 'sitemap:x', url: 'https://e.example/1', etag: '"e1"' }), [chunk('s1', 0, 'one')]);
      await k.put(article('s2', { origin: 'api' }), [chunk('s2', 0, 'two')]);
      expect(await k.byOrigin('sitemap:x')).toEqual([{ id: 's1', url: 'https://e.example/1', etag: '"e1"', lastModified: undefined }]);
    });
  });
}

for (const engine of engines) describeKnowledgeContract(engine.name, () => engine.open());
