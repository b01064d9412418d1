// HTML to headed sections with node-html-parser: the page's boilerplate (navigation, header, footer, asides, scripts,
// styles, forms) is left out, and its `main` or `article` is read when it has one. Headings h1–h6 open sections.
import { parse, type HTMLElement, type Node } from 'node-html-parser';

const BOILERPLATE =
  'nav, header, footer, aside, script, style, noscript, template, form, iframe, svg, button, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true]';
const BLOCKS = new Set([
  'p',
  'div',
  'li',
  'ul',
  'ol',
  'table',
  'tr',
  'section',
  'article',
  'main',
  'pre',
  'blockquote',
  'dd',
  'dt',
  'dl',
  'br',
  'td',
  'th',
  'figure',
  'figcaption',
]);
const HEADING = /^h([1-6])$/;

/** A heading path and the text under it (HTML and Markdown alike). */
export interface Section {
  headingPath: string[];
  text: string;
}

export interface ParsedHtml {
  /** The document's <title>, else its first h1. */
  title?: string;
  sections: Section[];
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

export function htmlToSections(html: string): ParsedHtml {
  const root = parse(html, { comment: false, blockTextElements: { script: false, style: false, noscript: false, pre: true } });
  const docTitle = squash(root.querySelector('title')?.text ?? '') || undefined;
  for (const el of root.querySelectorAll(BOILERPLATE)) el.remove();
  const body = root.querySelector('main') ?? root.querySelector('article') ?? root.querySelector('body') ?? root;
  const sections: Section[] = [];
  const path: { level: number; text: string }[] = [];
  let buffer: string[] = [];
  let line = '';
  const endLine = () => {
    const t = squash(line);
    if (t) buffer.push(t);
    line = '';
  };
  const endSection = () => {
    endLine();
    if (buffer.length) sections.push({ headingPath: path.map((h) => h.text), text: buffer.join('\n') });
    buffer = [];
  };
  const walk = (node: Node) => {
    if (node.nodeType === 3) {
      line += ` ${(node as unknown as { text: string }).text}`;
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node as HTMLElement;
    const tag = el.tagName?.toLowerCase() ?? '';
    const h = HEADING.exec(tag);
    if (h) {
      endSection();
      const level = Number(h[1]);
      while (path.length && path[path.length - 1].level >= level) path.pop();
      const text = squash(el.text);
      if (text) path.push({ level, text });
      return;
    }
    const block = BLOCKS.has(tag);
    if (block) endLine();
    for (const child of el.childNodes) walk(child);
    if (block) endLine();
  };
  walk(body);
  endSection();
  const h1 = squash(root.querySelector('h1')?.text ?? '') || undefined;
  return { title: docTitle ?? h1, sections };
}
