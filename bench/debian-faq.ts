// A real, public help corpus for bench/knowledge.ts: the Debian GNU/Linux FAQ, as Debian's `debian-faq` package installs
// it (/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz; © 1996-2021 Software in the Public Interest; verbatim copies and
// modified versions under the same permission notice, see /usr/share/doc/debian-faq/copyright). Its text is read
// from the installed package at run time, never copied into this repository. Each numbered section (`7.12. How do I
// put a package on hold?`) becomes one Markdown article titled with its question, its numbered subsections
// (`8.1.2. APT`) its `##` headings; a chapter's introduction, when it has one, is an article of its own.
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { ArticleInput } from '../src/knowledge/service.ts';

export const DEBIAN_FAQ_TEXT = '/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz';
export const DEBIAN_FAQ_INSTALL = 'sudo apt-get install debian-faq';
export const DEBIAN_FAQ_URL = 'https://www.debian.org/doc/manuals/debian-faq/';

export const debianFaqInstalled = () => existsSync(DEBIAN_FAQ_TEXT);

// the FAQ's plain-text rendering puts a no-break space after a section's number
const SECTION = /^(\d+)\.(\d+)\.[\u00a0 ](.*)$/;
const SUBSECTION = /^(\d+)\.(\d+)\.(\d+)\.[\u00a0 ](.*)$/;
const CHAPTER = /^Chapter[\u00a0 ](\d+)\.[\u00a0 ](.*)$/;

interface Draft {
  id: string;
  title: string;
  lines: string[];
  /** Still reading a heading that wraps onto the next lines (unindented, until a blank line). */
  heading: 'title' | 'sub' | undefined;
}

/** The FAQ's sections as articles, ids `debian-faq-7.12` (sections) and `debian-faq-7` (a chapter's introduction). */
export function debianFaqArticles(path = DEBIAN_FAQ_TEXT): ArticleInput[] {
  const lines = gunzipSync(readFileSync(path)).toString('utf8').split('\n');
  const start = lines.findIndex((l) => CHAPTER.test(l));
  const drafts: Draft[] = [];
  let current: Draft | undefined;
  for (const line of lines.slice(start)) {
    const chapter = CHAPTER.exec(line);
    const sub = SUBSECTION.exec(line);
    const section = sub ? null : SECTION.exec(line);
    if (chapter) drafts.push((current = { id: `debian-faq-${chapter[1]}`, title: chapter[2], lines: [], heading: undefined }));
    else if (section) drafts.push((current = { id: `debian-faq-${section[1]}.${section[2]}`, title: section[3], lines: [], heading: 'title' }));
    else if (!current) continue;
    else if (sub) {
      current.lines.push('', `## ${sub[4]}`);
      current.heading = 'sub';
    } else if (current.heading && line.trim() && !line.startsWith(' ')) {
      if (current.heading === 'title') current.title += ` ${line.trim()}`;
      else current.lines[current.lines.length - 1] += ` ${line.trim()}`;
    } else {
      current.heading = undefined;
      current.lines.push(line.trim());
    }
  }
  return drafts
    .map((d) => ({ ...d, text: d.lines.join('\n').trim() }))
    .filter((d) => d.text.length > 0)
    .map((d) => ({
      id: d.id,
      title: d.title,
      url: `${DEBIAN_FAQ_URL}#${d.id.slice('debian-faq-'.length)}`,
      body: `# ${d.title}\n\n${d.text}\n`,
      format: 'markdown' as const,
    }));
}
