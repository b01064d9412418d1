// Charts: uPlot time series, and horizontal bar charts for breakdowns.
import uPlot from 'uplot';
import type { Summary } from './api.ts';
import { h } from './dom.ts';

const COLORS = ['#2f5bea', '#1f9d55', '#e3a008', '#d64545', '#8b5cf6', '#0ea5e9', '#f97316'];

function card(title: string, points: number): { root: HTMLElement; body: HTMLElement } {
  const body = h('div', { class: 'chart-body' });
  const root = h('section', { class: 'card chart', 'data-testid': 'chart', 'data-points': String(points), 'aria-label': title }, h('h3', {}, title), body);
  return { root, body };
}

function drawnPoints(u: uPlot): number {
  let n = 0;
  u.series.forEach((s, i) => {
    if (i === 0 || !s.show || !s.idxs) return;
    const ys = u.data[i];
    for (let j = s.idxs[0]; j <= s.idxs[1]; j++) if (ys[j] != null && ys[j] !== 0) n++;
  });
  return n;
}

export function timeSeries(title: string, xs: number[], series: { label: string; values: (number | null)[] }[], unit = ''): HTMLElement {
  const points = series.reduce((n, s) => n + s.values.filter((v) => v !== null && v !== 0).length, 0);
  const { root, body } = card(title, points);
  if (series.length === 0) {
    body.append(h('p', { class: 'empty' }, 'No data in this window yet.'));
    return root;
  }
  const data = [xs.map((x) => x / 1000), ...series.map((s) => s.values)] as uPlot.AlignedData;
  const opts: uPlot.Options = {
    width: 460,
    height: 200,
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true, points: { show: true, size: 4 } }))],
    axes: [{}, { values: (_u, vals) => vals.map((v) => `${v}${unit}`) }],
    legend: { show: true },
    // What uPlot actually drew: non-empty points inside each series' visible index range.
    hooks: { draw: [(u) => root.setAttribute('data-drawn', String(drawnPoints(u)))] },
  };
  // uPlot measures its container: render after insertion.
  requestAnimationFrame(() => {
    const plot = new uPlot({ ...opts, width: Math.max(280, body.clientWidth || 460) }, data, body);
    root.addEventListener('parley:destroy', () => plot.destroy(), { once: true });
  });
  return root;
}

export function bars(title: string, rows: { label: string; value: number; tone?: 'bad' | 'good' }[]): HTMLElement {
  const { root, body } = card(title, rows.filter((r) => r.value > 0).length);
  if (rows.length === 0) {
    body.append(h('p', { class: 'empty' }, 'No data in this window yet.'));
    return root;
  }
  const max = Math.max(1, ...rows.map((r) => r.value));
  const list = h('div', { class: 'bars', role: 'list' });
  for (const r of rows) {
    const fill = h('div', { class: `bar-fill ${r.tone ?? ''}` });
    fill.style.width = `${(100 * r.value) / max}%`;
    list.append(
      h(
        'div',
        { class: 'bar', role: 'listitem' },
        h('span', { class: 'bar-label' }, r.label),
        h('div', { class: 'bar-track' }, fill),
        h('span', { class: 'bar-value' }, String(r.value)),
      ),
    );
  }
  body.append(list);
  return root;
}

export function summaryCharts(s: Summary): HTMLElement[] {
  const msgSeries = Object.entries(s.messages).map(([label, values]) => ({ label, values }));
  const tokenSeries = Object.entries(s.tokenSeries).map(([model, values]) => ({ label: model, values }));
  const proactiveSeries = [
    { label: 'accepted', values: s.proactive.accepted },
    ...Object.entries(s.proactive.blockedSeries).map(([reason, values]) => ({ label: `blocked: ${reason}`, values })),
  ];
  return [
    timeSeries('Messages per channel', s.buckets, msgSeries),
    timeSeries(
      'LLM latency (p50 / p95)',
      s.buckets,
      [
        { label: 'p50', values: s.llm.p50 },
        { label: 'p95', values: s.llm.p95 },
      ],
      ' ms',
    ),
    timeSeries('Tokens per model', s.buckets, tokenSeries),
    timeSeries('Proactive: accepted vs blocked by reason', s.buckets, proactiveSeries),
    timeSeries('Tool failures', s.buckets, [
      { label: 'failures', values: s.toolFailures },
      { label: 'LLM calls', values: s.llm.calls },
    ]),
    bars(
      'Tool calls by name',
      Object.entries(s.tools).flatMap(([name, t]) => [
        { label: `${name}`, value: t.invoked },
        ...(t.failed ? [{ label: `${name} failed`, value: t.failed, tone: 'bad' as const }] : []),
      ]),
    ),
    bars(
      'Confirmations',
      Object.entries(s.confirmations).map(([label, value]) => ({
        label,
        value,
        tone: label === 'approved' ? ('good' as const) : label === 'requested' ? undefined : ('bad' as const),
      })),
    ),
    bars(
      'WhatsApp delivery',
      Object.entries(s.whatsappStatuses).map(([label, value]) => ({ label, value, tone: label === 'failed' ? ('bad' as const) : undefined })),
    ),
  ];
}
