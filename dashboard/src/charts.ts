// Charts: uPlot time series, and horizontal bar charts for breakdowns.
import uPlot from 'uplot';
import type { Summary } from './api.ts';
import { fmtMs, h } from './dom.ts';

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

const HEIGHT = 220;

/** How a series is summed up in its legend when the cursor is not on the chart. */
export type Aggregate = 'sum' | 'max';

function aggregate(values: (number | null)[], how: Aggregate): number | null {
  const xs = values.filter((v): v is number => v !== null);
  if (!xs.length) return null;
  return how === 'sum' ? xs.reduce((a, b) => a + b, 0) : Math.max(...xs);
}

const lastIndexWithData = (series: { values: (number | null)[] }[]) => {
  let last = -1;
  for (const s of series) for (let i = s.values.length - 1; i > last; i--) if (s.values[i] !== null && s.values[i] !== 0) last = i;
  return last;
};

export function timeSeries(
  title: string,
  xs: number[],
  series: { label: string; values: (number | null)[] }[],
  o: { unit?: string; aggregate?: Aggregate; format?: (v: number) => string } = {},
): HTMLElement {
  const unit = o.unit ?? '';
  const how = o.aggregate ?? 'sum';
  const fmt = o.format ?? ((v: number) => `${Math.round(v * 100) / 100}${unit}`);
  const points = series.reduce((n, s) => n + s.values.filter((v) => v !== null && v !== 0).length, 0);
  const { root, body } = card(title, points);
  if (series.length === 0) {
    body.append(h('p', { class: 'empty' }, 'No data in this window yet.'));
    return root;
  }
  // The legend names each series with its total (or peak) over the window; hovering shows the value at the cursor.
  const labelled = series.map((s) => {
    const a = aggregate(s.values, how);
    return { label: a === null ? s.label : `${s.label} · ${how === 'sum' ? 'total' : 'peak'} ${fmt(a)}`, values: s.values };
  });
  const data = [xs.map((x) => x / 1000), ...labelled.map((s) => s.values)] as uPlot.AlignedData;
  const last = lastIndexWithData(series);
  const opts: uPlot.Options = {
    width: 460,
    height: HEIGHT,
    series: [
      {},
      ...labelled.map((s, i) => ({
        label: s.label,
        stroke: COLORS[i % COLORS.length],
        fill: `${COLORS[i % COLORS.length]}14`,
        width: 2,
        spanGaps: true,
        points: { show: true, size: 4 },
        value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? '–' : fmt(v)),
      })),
    ],
    axes: [{}, { values: (_u, vals) => vals.map((v) => `${v}${unit}`), size: 56 }],
    legend: { show: true, live: true },
    hooks: {
      // What uPlot actually drew: non-empty points inside each series' visible index range.
      draw: [(u) => root.setAttribute('data-drawn', String(drawnPoints(u)))],
      // Away from the cursor, the legend shows the latest bucket with data rather than dashes.
      setCursor: [(u) => u.cursor.idx == null && last >= 0 && u.setLegend({ idx: last })],
      ready: [(u) => last >= 0 && u.setLegend({ idx: last })],
    },
  };
  // uPlot draws at a fixed size: render after insertion at the card's width, and follow the card as it resizes.
  requestAnimationFrame(() => {
    if (!root.isConnected) return;
    // `width` is the plot's own width: adding the plot can itself change the card's (a page scrollbar appears).
    let width = Math.max(200, body.clientWidth);
    const plot = new uPlot(Object.assign({}, opts, { width }), data, body);
    const resize = new ResizeObserver(() => {
      const next = Math.max(200, body.clientWidth);
      if (next === width || body.clientWidth === 0) return;
      width = next;
      plot.setSize({ width, height: HEIGHT });
    });
    resize.observe(body);
    root.addEventListener(
      'parley:destroy',
      () => {
        resize.disconnect();
        plot.destroy();
      },
      { once: true },
    );
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
  const ms = (v: number) => fmtMs(v);
  return [
    timeSeries('Messages per channel', s.buckets, msgSeries),
    timeSeries(
      'LLM latency (p50 / p95)',
      s.buckets,
      [
        { label: 'p50', values: s.llm.p50 },
        { label: 'p95', values: s.llm.p95 },
      ],
      { aggregate: 'max', format: ms },
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
