// A reply's sources (issue 36): each "[n]" in its text becomes a numbered chip (a link to the article when it has a
// URL), and a "Sources" list follows the text. Links open in a new tab (rel="noopener noreferrer"), only for http(s)
// URLs; text goes in with text nodes only.
import type { MessageSource } from '../../sdk/src/widget-protocol.ts';
import { safeHref } from './markdown.ts';
import { fill, type Strings } from './strings.ts';

const MARKER = /\[(\d{1,3})\]/g;

const anchor = (doc: Document, href: string) => {
  const a = doc.createElement('a');
  a.setAttribute('href', href);
  a.setAttribute('target', '_blank');
  a.setAttribute('rel', 'noopener noreferrer');
  return a;
};

function chip(doc: Document, s: MessageSource, strings: Strings): HTMLElement {
  const href = s.url ? safeHref(s.url) : undefined;
  const node = href ? anchor(doc, href) : doc.createElement('span');
  node.setAttribute('class', 'cite');
  node.setAttribute('data-testid', 'source-chip');
  node.setAttribute('data-n', String(s.n));
  node.setAttribute('title', s.title);
  node.setAttribute('aria-label', `${fill(strings.sourceChip, { n: s.n })}: ${s.title}`);
  node.textContent = String(s.n);
  return node;
}

/** Replaces the "[n]" markers of `root`'s text (outside code and links) with chips of the sources they cite. */
export function addSourceChips(root: HTMLElement, sources: MessageSource[], strings: Strings) {
  const doc = root.ownerDocument;
  const byN = new Map(sources.map((s) => [s.n, s]));
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!n.parentElement?.closest('code, pre, a')) texts.push(n as Text);
  for (const t of texts) {
    const value = t.data;
    if (!MARKER.test(value)) continue;
    MARKER.lastIndex = 0;
    const out = doc.createDocumentFragment();
    let last = 0;
    for (const m of value.matchAll(MARKER)) {
      const source = byN.get(Number(m[1]));
      if (!source) continue;
      if (m.index > last) out.append(value.slice(last, m.index));
      out.append(chip(doc, source, strings));
      last = m.index + m[0].length;
    }
    if (last === 0) continue;
    if (last < value.length) out.append(value.slice(last));
    t.replaceWith(out);
  }
}

/** "Sources": the numbered list of a reply's sources, titles linked to their articles. */
export function sourcesNode(doc: Document, sources: MessageSource[], strings: Strings): HTMLElement {
  const nav = doc.createElement('div');
  nav.setAttribute('class', 'sources');
  nav.setAttribute('data-testid', 'sources');
  const heading = doc.createElement('p');
  heading.setAttribute('class', 'sources-title');
  heading.textContent = strings.sources;
  const list = doc.createElement('ol');
  for (const s of sources) {
    const li = doc.createElement('li');
    li.setAttribute('value', String(s.n));
    li.setAttribute('data-testid', 'source');
    const href = s.url ? safeHref(s.url) : undefined;
    const title = href ? anchor(doc, href) : doc.createElement('span');
    title.textContent = s.title;
    title.setAttribute('dir', 'auto');
    li.append(title);
    list.append(li);
  }
  nav.append(heading, list);
  return nav;
}
