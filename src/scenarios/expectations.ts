// Checks one expectation on what was observed; returns the differences (none: it holds). Tool expectations consume
// calls in order: `cursor.tool` is the index after the last matched call of the window.
import { isDeepStrictEqual } from 'node:util';
import type { Expectation, ReplyExpectation, SourceExpectation } from './schema.ts';
import type { CitedSource, Difference, Observed, ToolCall } from './observed.ts';

export interface Cursor {
  tool: number;
}

const show = (v: unknown) => (v === undefined ? '(nothing)' : JSON.stringify(v));
const listTools = (tools: ToolCall[]) =>
  tools.length
    ? tools.map((t) => `${t.name}(${t.args ? JSON.stringify(t.args) : '…'})${t.ok === false ? ` failed: ${t.error ?? ''}` : ''}`).join(', ')
    : 'no tool call';

/** `expected` is a subset of `actual`: every expected key has an equal value (numbers and strings compare as text). */
export function isSubset(expected: unknown, actual: unknown): boolean {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object') return false;
    return Object.entries(expected).every(([k, v]) => isSubset(v, (actual as Record<string, unknown>)[k]));
  }
  if ((typeof expected === 'number' || typeof expected === 'string') && (typeof actual === 'number' || typeof actual === 'string'))
    return String(expected) === String(actual);
  return isDeepStrictEqual(expected, actual);
}

export function checkReply(what: string, e: ReplyExpectation, texts: string[]): Difference[] {
  const all = texts.join('\n');
  const lower = all.toLowerCase();
  const happened = texts.length ? `${what}: ${texts.map((t) => JSON.stringify(t)).join(' then ')}` : `no ${what}`;
  const out: Difference[] = [];
  if (e.contains !== undefined && !lower.includes(e.contains.toLowerCase())) out.push({ expected: `${what} contains ${show(e.contains)}`, happened });
  if (e.matches !== undefined && !new RegExp(e.matches, 'i').test(all)) out.push({ expected: `${what} matches /${e.matches}/`, happened });
  if (e.not_contains !== undefined && lower.includes(e.not_contains.toLowerCase()))
    out.push({ expected: `${what} does not contain ${show(e.not_contains)}`, happened });
  if (e.contains === undefined && e.matches === undefined && e.not_contains === undefined && texts.length === 0) out.push({ expected: `a ${what}`, happened });
  return out;
}

const showSource = (s: CitedSource) => `[${s.n}] ${s.title}${s.url ? ` <${s.url}>` : ''}`;
const cites = (e: SourceExpectation, s: CitedSource) =>
  typeof e === 'string'
    ? s.title.toLowerCase().includes(e.toLowerCase())
    : (e.title === undefined || s.title.toLowerCase().includes(e.title.toLowerCase())) &&
      (e.url === undefined || (s.url ?? '').includes(e.url)) &&
      (e.n === undefined || s.n === e.n);

/** Each expected source is among the cited ones; an empty list: none is cited. */
export function checkSources(expected: SourceExpectation[], cited: CitedSource[]): Difference[] {
  const happened = cited.length ? `the reply cites ${cited.map(showSource).join(', ')}` : 'the reply cites no source';
  if (expected.length === 0) return cited.length ? [{ expected: 'the reply cites no source', happened }] : [];
  return expected
    .filter((e) => !cited.some((s) => cites(e, s)))
    .map((e) => ({ expected: `the reply cites ${typeof e === 'string' ? JSON.stringify(e) : `a source ⊇ ${JSON.stringify(e)}`}`, happened }));
}

function checkTool(e: Expectation, o: Observed, cursor: Cursor): Difference[] {
  const name = e.tool!;
  const rest = o.tools.slice(cursor.tool);
  const index = rest.findIndex((t) => t.name === name && (e.args === undefined || isSubset(e.args, t.args)));
  if (index >= 0) {
    cursor.tool += index + 1;
    return [];
  }
  const expected = `tool ${name}${e.args ? ` with args ⊇ ${JSON.stringify(e.args)}` : ''}`;
  const sameName = rest.find((t) => t.name === name);
  if (sameName && e.args) return [{ expected, happened: `${name} was called with ${show(sameName.args)}` }];
  const earlier = o.tools.slice(0, cursor.tool).some((t) => t.name === name);
  return [{ expected, happened: earlier ? `${name} was called, but before the tool expected just ahead of it (${listTools(o.tools)})` : listTools(o.tools) }];
}

export function checkConfirmation(e: Expectation, o: Observed): Difference[] {
  const asked = o.confirmations.find((c) => e.tool === undefined || c.name === e.tool);
  if (asked) return [];
  return [
    {
      expected: `the customer is asked to confirm${e.tool ? ` ${e.tool}` : ''}`,
      happened: o.confirmations.length ? `confirmations asked: ${o.confirmations.map((c) => c.name).join(', ')}` : 'no confirmation was asked',
    },
  ];
}

/** The checks that need no model and no backend call. */
export function checkLocal(e: Expectation, o: Observed, cursor: Cursor): Difference[] {
  const out: Difference[] = [];
  if (e.tool !== undefined) out.push(...checkTool(e, o, cursor));
  if (e.confirmation !== undefined) out.push(...checkConfirmation(e, o));
  if (e.no_tool && o.tools.length) out.push({ expected: 'no tool call', happened: listTools(o.tools) });
  if (e.reply) out.push(...checkReply('reply', e.reply, o.replies));
  if (e.reply?.sources) out.push(...checkSources(e.reply.sources, o.sources));
  if (e.proactive) out.push(...checkReply('proactive message', e.proactive, o.proactive));
  if (e.handoff !== undefined && e.handoff !== o.handoff)
    out.push({ expected: e.handoff ? 'handed to a person' : 'not handed to a person', happened: o.handoff ? 'handed to a person' : 'the assistant kept it' });
  return out;
}

export function checkBackendResult(e: NonNullable<Expectation['backend']>, outcome: { ok: boolean; data?: unknown; error?: string }): Difference[] {
  const call = `${e.call}(${JSON.stringify(e.args)})`;
  if (!outcome.ok) return [{ expected: `backend ${call} answers`, happened: `it failed: ${outcome.error}` }];
  if (e.equals !== undefined && !isDeepStrictEqual(e.equals, outcome.data))
    return [{ expected: `backend ${call} = ${show(e.equals)}`, happened: show(outcome.data) }];
  if (e.contains !== undefined && !isSubset(e.contains, outcome.data))
    return [{ expected: `backend ${call} ⊇ ${show(e.contains)}`, happened: show(outcome.data) }];
  return [];
}
