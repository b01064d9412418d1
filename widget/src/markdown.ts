// A safe subset of Markdown to DOM nodes, for replies: paragraphs, line breaks, **bold**, *italic* / _italic_,
// `inline code`, fenced code blocks, - / * / 1. lists, [text](url) and bare URLs. Text only ever goes in with
// text nodes (never innerHTML), so HTML in a message shows as text; a link is made only for http(s) and mailto
// URLs, opening in a new tab with rel="noopener noreferrer nofollow". Anything else stays as written.

/** A URL a link may point to: http(s) or mailto, as the browser parses it. Otherwise undefined. */
export function safeHref(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:' ? u.href : undefined;
}

const link = (doc: Document, href: string, text: string): HTMLElement => {
  const a = doc.createElement('a');
  a.setAttribute('href', href);
  a.setAttribute('target', '_blank');
  a.setAttribute('rel', 'noopener noreferrer nofollow');
  a.textContent = text;
  return a;
};

// One alternative per inline form, tried left to right: code, link, bare URL, bold, italic.
const INLINE =
  /`([^`\n]+)`|\[([^\]\n]+)\]\(([^)\s]+)\)|((?:https?:\/\/|mailto:)[^\s<>()]+[^\s<>().,;:!?'"])|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_\n]*?\S)_(?![\w_])/g;

/** Inline Markdown of `text` appended to `parent`. */
export function appendInline(parent: Node, text: string, doc: Document = document) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    const at = m.index ?? 0;
    if (at > last) appendText(parent, text.slice(last, at), doc);
    last = at + m[0].length;
    const [, code, linkText, linkUrl, bare, bold1, bold2, em1, em2] = m;
    if (code !== undefined) {
      const c = doc.createElement('code');
      c.textContent = code;
      parent.appendChild(c);
    } else if (linkText !== undefined) {
      const href = safeHref(linkUrl);
      if (href) {
        const a = link(doc, href, '');
        appendInline(a, linkText, doc);
        parent.appendChild(a);
      } else appendText(parent, m[0], doc);
    } else if (bare !== undefined) {
      const href = safeHref(bare);
      parent.appendChild(href ? link(doc, href, bare) : doc.createTextNode(bare));
    } else {
      const strong = bold1 ?? bold2;
      const node = doc.createElement(strong !== undefined ? 'strong' : 'em');
      appendInline(node, strong ?? em1 ?? em2 ?? '', doc);
      parent.appendChild(node);
    }
  }
  if (last < text.length) appendText(parent, text.slice(last), doc);
}

/** Text with its single line breaks kept (`<br>`). */
function appendText(parent: Node, text: string, doc: Document) {
  text.split('\n').forEach((line, i) => {
    if (i > 0) parent.appendChild(doc.createElement('br'));
    if (line) parent.appendChild(doc.createTextNode(line));
  });
}

const FENCE = /^\s*```/;
const ITEM = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;

/** The blocks of `text` (paragraphs, lists, code blocks) as a fragment. */
export function renderMarkdown(text: string, doc: Document = document): DocumentFragment {
  const out = doc.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    if (FENCE.test(line)) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !FENCE.test(lines[i])) code.push(lines[i++]);
      i++; // the closing fence (or the end)
      const pre = doc.createElement('pre');
      const c = doc.createElement('code');
      c.textContent = code.join('\n');
      pre.appendChild(c);
      out.appendChild(pre);
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const ordered = item[2] !== undefined;
      const list = doc.createElement(ordered ? 'ol' : 'ul');
      if (ordered && item[2] !== '1') list.setAttribute('start', String(Number(item[2])));
      while (i < lines.length) {
        const m = ITEM.exec(lines[i]);
        if (!m || (m[2] !== undefined) !== ordered) break;
        const li = doc.createElement('li');
        appendInline(li, m[3], doc);
        list.appendChild(li);
        i++;
      }
      out.appendChild(list);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i].trim() && !FENCE.test(lines[i]) && !ITEM.exec(lines[i])) para.push(lines[i++]);
    const p = doc.createElement('p');
    appendInline(p, para.join('\n'), doc);
    out.appendChild(p);
  }
  return out;
}
