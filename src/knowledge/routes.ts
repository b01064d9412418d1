// /api/v1/knowledge (service secret): articles in and out, search, sync and the index's status.
import type { FastifyInstance } from 'fastify';
import { requireServiceSecret } from '../http/auth.ts';
import { notFound, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import type { KnowledgeArticle } from '../store/knowledge.ts';
import { ArticleInputSchema, IdParamsSchema, ListQuerySchema, SearchQuerySchema, type UpsertAnswer } from './schema.ts';
import type { Knowledge } from './service.ts';
import type { KnowledgeSync } from './sync.ts';

const summary = (a: KnowledgeArticle) => ({
  id: a.id,
  title: a.title,
  url: a.url,
  format: a.format,
  locale: a.locale,
  tags: a.tags,
  origin: a.origin,
  createdAt: a.createdAt,
  updatedAt: a.updatedAt,
});

export async function knowledgePlugin(app: FastifyInstance, o: { services: Services; knowledge: Knowledge; sync: KnowledgeSync }) {
  const { knowledge } = o;
  const onRequest = requireServiceSecret(() => o.services.secret);

  app.post('/api/v1/knowledge/articles', { onRequest }, async (request, reply): Promise<UpsertAnswer> => {
    const input = parseOr400(ArticleInputSchema, request.body, 'body');
    const r = await knowledge.upsert(input);
    reply.code(r.created ? 201 : 200);
    return { id: r.article.id, created: r.created, chunks: r.chunks };
  });

  app.get('/api/v1/knowledge/articles', { onRequest }, async (request) => {
    const q = parseOr400(ListQuerySchema, request.query, 'query');
    const limit = q.limit ?? 50;
    const page = await knowledge.list({ after: q.cursor, limit: limit + 1 });
    const items = page.slice(0, limit).map(summary);
    return { items, nextCursor: page.length > limit ? items[items.length - 1].id : null };
  });

  app.get('/api/v1/knowledge/articles/:id', { onRequest }, async (request) => {
    const { id } = parseOr400(IdParamsSchema, request.params, 'params');
    const a = await knowledge.get(id);
    if (!a) throw notFound(`No article ${id}`);
    return a;
  });

  app.delete('/api/v1/knowledge/articles/:id', { onRequest }, async (request, reply) => {
    const { id } = parseOr400(IdParamsSchema, request.params, 'params');
    if (!(await knowledge.remove(id))) throw notFound(`No article ${id}`);
    return reply.code(204).send();
  });

  app.get('/api/v1/knowledge/search', { onRequest }, async (request) => {
    const q = parseOr400(SearchQuerySchema, request.query, 'query');
    return { items: await knowledge.search(q.q, { locale: q.locale, limit: q.limit ?? 5 }) };
  });

  app.post('/api/v1/knowledge/sync', { onRequest }, async () => o.sync.runNow());

  app.get('/api/v1/knowledge/status', { onRequest }, async () => ({
    counts: await knowledge.store.count(),
    index: knowledge.store.indexInfo(),
    sync: o.sync.status(),
  }));
}
