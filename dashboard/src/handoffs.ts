// The "Handoffs" card (issue 35, part 6): waiting now, handed over in the window, time to first agent reply and to
// resolution (median and p90), overall and per agent. Read from `/api/v1/telemetry/handoffs` and the conversations a
// person has now (`/conversations?state=withHuman`).
import type { ConversationList } from '../../sdk/src/agent-api.ts';
import type { HandoffSummary, HandoffTimes } from '../../src/telemetry/handoff-summary.ts';
import { h } from './dom.ts';

/** "45 s", "12 min", "3.5 h", "–". */
export const fmtWait = (ms: number | null) => {
  if (ms === null) return '–';
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
};

const tile = (label: string, value: string, testId: string) =>
  h('div', { class: 'kpi', 'data-testid': testId }, h('div', { class: 'value' }, value), h('div', { class: 'label' }, label));

const timesText = (t: HandoffTimes) => (t.count ? `${fmtWait(t.medianMs)} (p90 ${fmtWait(t.p90Ms)})` : '–');

export function renderHandoffs(card: HTMLElement, s: HandoffSummary, withHuman: ConversationList, windowLabel: string) {
  const waiting = withHuman.items.filter((c) => c.handoff && !c.handoff.agent).length;
  const rows = s.agents.map((a) =>
    h(
      'tr',
      { 'data-testid': 'handoff-agent-row' },
      h('td', { title: a.agentId }, a.agentId === 'none' ? 'Systems (service secret)' : (a.name ?? a.agentId)),
      h('td', {}, String(a.firstReply.count)),
      h('td', {}, timesText(a.firstReply)),
      h('td', {}, String(a.resolution.count)),
      h('td', {}, timesText(a.resolution)),
    ),
  );
  card.replaceChildren(
    h('h2', {}, `Handoffs (${windowLabel})`),
    h(
      'div',
      { class: 'kpis handoff-kpis' },
      tile('Waiting for a person now', `${waiting}${withHuman.nextBefore ? '+' : ''}`, 'handoffs-waiting'),
      tile('Handed over', String(s.requested), 'handoffs-requested'),
      tile('First agent reply, median', fmtWait(s.firstReply.medianMs), 'handoffs-first-reply'),
      tile('Resolution, median', fmtWait(s.resolution.medianMs), 'handoffs-resolution'),
    ),
    h(
      'div',
      { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Handoffs per agent (scrolls)' },
      h(
        'table',
        { 'data-testid': 'handoff-agents' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Agent'),
            h('th', {}, 'First replies'),
            h('th', {}, 'Time to first reply'),
            h('th', {}, 'Resolved'),
            h('th', {}, 'Time to resolution'),
          ),
        ),
        h('tbody', {}, ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: '5', class: 'empty' }, 'No agent has answered a handoff in this window.'))])),
      ),
    ),
  );
}
