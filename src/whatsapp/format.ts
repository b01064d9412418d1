// Markdown as a model writes it → WhatsApp's own formatting: **bold** → *bold*, *italic* / _italic_ → _italic_,
// ~~strike~~ → ~strike~, [text](url) → text (url), # headings → *heading*, "* item" → "- item". Code (`x`, ```x```)
// is left as it is (WhatsApp shows both as monospace), and so is everything inside it. Pure.

const HOLD = '\uE000';

export function toWhatsAppText(markdown: string): string {
  const held: string[] = [];
  const hold = (s: string) => `${HOLD}${held.push(s) - 1}${HOLD}`;
  let t = markdown.replace(/\r\n?/g, '\n');
  // Code first: nothing inside it is formatting.
  t = t.replace(/```[\s\S]*?```/g, hold).replace(/`[^`\n]+`/g, hold);
  // Links: the text, then the URL in brackets (the URL alone when the text is the URL).
  t = t.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_, text: string, url: string) => (text === url || `mailto:${text}` === url ? url : `${text} (${url})`));
  // Bare URLs are held so their underscores and asterisks stay as they are.
  t = t.replace(/(?:https?:\/\/|mailto:)[^\s<>()]+/g, hold);
  t = t.replace(/^#{1,6}[ \t]+(.+?)[ \t]*#*$/gm, (_, h: string) => hold(`*${h}*`));
  t = t.replace(/^([ \t]*)[*+][ \t]+/gm, '$1- ');
  t = t.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__/g, (_, a?: string, b?: string) => hold(`*${a ?? b}*`));
  t = t.replace(/(?<![\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, (_, a: string) => hold(`_${a}_`));
  t = t.replace(/~~(?=\S)([^~\n]*?\S)~~/g, (_, a: string) => hold(`~${a}~`));
  // Held pieces may hold others (a bold heading with a link): restore until none is left.
  const restore = /\uE000(\d+)\uE000/g;
  while (restore.test(t)) t = t.replace(restore, (_, i: string) => held[Number(i)]);
  return t;
}

/** WhatsApp's limit on a text message's body (Cloud API). */
export const WHATSAPP_TEXT_MAX = 4096;
/** The sources line's own share of a message at most (titles are cut, then the last sources left out). */
const SOURCES_LINE_MAX = 1000;
const TITLE_MAX = 80;

/** "Sources: 1. Returns policy – https://…; 2. Shipping times": plain text (no formatting), within SOURCES_LINE_MAX. */
export function sourcesLine(sources: { n: number; title: string; url?: string }[]): string {
  const items = sources.map((s) => {
    const title = s.title.length > TITLE_MAX ? `${s.title.slice(0, TITLE_MAX - 1)}…` : s.title;
    return `${s.n}. ${title}${s.url ? ` – ${s.url}` : ''}`;
  });
  let line = `Sources: ${items.join('; ')}`;
  while (line.length > SOURCES_LINE_MAX && items.length > 1) {
    items.pop();
    line = `Sources: ${items.join('; ')}`;
  }
  return line.length > SOURCES_LINE_MAX ? `${line.slice(0, SOURCES_LINE_MAX - 1)}…` : line;
}

/** A reply for WhatsApp: its text in WhatsApp's formatting, then its sources line; the whole within WHATSAPP_TEXT_MAX. */
export function toWhatsAppReply(markdown: string, sources?: { n: number; title: string; url?: string }[]): string {
  const body = toWhatsAppText(markdown);
  const line = sources?.length ? `\n\n${sourcesLine(sources)}` : '';
  const room = WHATSAPP_TEXT_MAX - line.length;
  return `${body.length > room ? `${body.slice(0, room - 1)}…` : body}${line}`;
}
