// Articles to chunks along their headings: each chunk knows its article, its heading path and its position. A long
// section is cut at paragraph (then sentence) boundaries into pieces of at most MAX_CHARS; tiny sections are kept (a
// heading with one line under it is often exactly the answer).
import { chunkIdOf, type ArticleFormat, type KnowledgeChunk } from '../store/knowledge.ts';
import { htmlToSections, type Section } from './html.ts';

export type { Section };

export const MAX_CHARS = 1200;

/** Markdown with its syntax reduced to text: links keep their words, images and HTML tags go, code stays. */
function markdownLine(line: string): string {
  return line
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '')
    .replace(/^\s*>\s?/, '')
    .replace(/(\*\*|__|\*|_|`)/g, '')
    .replace(/^\s*\|?\s*:?-{3,}.*$/, '')
    .trim();
}

export function markdownToSections(body: string): Section[] {
  const sections: Section[] = [];
  const path: { level: number; text: string }[] = [];
  let lines: string[] = [];
  let fenced = false;
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) sections.push({ headingPath: path.map((h) => h.text), text });
    lines = [];
  };
  for (const raw of body.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      continue;
    }
    const heading = fenced ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(raw);
    if (heading) {
      flush();
      const level = heading[1].length;
      while (path.length && path[path.length - 1].level >= level) path.pop();
      path.push({ level, text: markdownLine(heading[2]) });
      continue;
    }
    const line = fenced ? raw : markdownLine(raw);
    if (line || lines.length) lines.push(line);
  }
  flush();
  return sections;
}

export function textToSections(body: string): Section[] {
  const text = body.trim();
  return text ? [{ headingPath: [], text }] : [];
}

export function toSections(body: string, format: ArticleFormat): Section[] {
  if (format === 'markdown') return markdownToSections(body);
  if (format === 'html') return htmlToSections(body).sections;
  return textToSections(body);
}

/** `text` cut into pieces of at most `max` characters, at paragraph, then sentence, then word boundaries. */
export function splitText(text: string, max = MAX_CHARS): string[] {
  if (text.length <= max) return [text];
  const units = text.split(/\n\s*\n/).flatMap((p) => (p.length <= max ? [p] : p.split(/(?<=[.!?])\s+/)));
  const pieces: string[] = [];
  let current = '';
  for (const unit of units.flatMap((u) => (u.length <= max ? [u] : (u.match(new RegExp(`[\\s\\S]{1,${max}}(?=\\s|$)|[\\s\\S]{1,${max}}`, 'g')) ?? [u])))) {
    if (current && current.length + unit.length + 2 > max) {
      pieces.push(current.trim());
      current = '';
    }
    current += (current ? '\n\n' : '') + unit;
  }
  if (current.trim()) pieces.push(current.trim());
  return pieces;
}

export function chunkArticle(articleId: string, body: string, format: ArticleFormat): KnowledgeChunk[] {
  const chunks: KnowledgeChunk[] = [];
  for (const section of toSections(body, format)) {
    for (const text of splitText(section.text)) {
      const position = chunks.length;
      chunks.push({ chunkId: chunkIdOf(articleId, position), articleId, position, headingPath: section.headingPath, text });
    }
  }
  return chunks;
}
