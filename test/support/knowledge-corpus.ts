// The knowledge fixture (test/fixtures/knowledge): 40 help-centre articles and the questions written for them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KNOWLEDGE_FIXTURE = fileURLToPath(new URL('../fixtures/knowledge/', import.meta.url));

export interface CorpusArticle {
  id: string;
  title: string;
  body: string;
  format: 'markdown';
}

export function corpusArticles(): CorpusArticle[] {
  const dir = join(KNOWLEDGE_FIXTURE, 'articles');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => {
      const body = readFileSync(join(dir, f), 'utf8');
      const title = /^#\s+(.+)$/m.exec(body)?.[1] ?? f;
      return { id: f.replace(/\.md$/, ''), title, body, format: 'markdown' as const };
    });
}

export function corpusQuestions(): { q: string; article: string }[] {
  return (JSON.parse(readFileSync(join(KNOWLEDGE_FIXTURE, 'questions.json'), 'utf8')) as { questions: { q: string; article: string }[] }).questions;
}
