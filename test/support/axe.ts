// axe-core run inside a page: the accessibility violations a test expects to be none.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Axe {
  run(context?: unknown): Promise<{ violations: { id: string; nodes: { target: unknown[] }[] }[] }>;
}

/**
 * Every violation axe-core finds, as `rule: target, target…`: on the whole page, or only inside the element `within`
 * selects (a shadow host such as the widget's, whose targets are paths through shadow roots, shown as JSON).
 */
export async function axeViolations(page: Page, within?: string): Promise<string[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  return page.evaluate(async (selector) => {
    const axe = (window as unknown as { axe: Axe }).axe;
    const r = selector === undefined ? await axe.run() : await axe.run(document.querySelector(selector)!);
    const target = (t: unknown[]) => (selector === undefined ? t.join(' ') : JSON.stringify(t));
    return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => target(n.target)).join(', ')}`);
  }, within);
}
