// Charts: uPlot time series, and horizontal bar charts for breakdowns.
import uPlot from 'uplot';
import type { Summary } from './api.ts';
import { fmtMs, h } from './dom.ts';

const COLORS = ['#2f5bea', '#1f9d55', '#e3a008', '#d64545', '#8b5cf6', '#0ea5e9', '#f97316'];

function card(title: string, points: number): { root: HTMLElement; body: HTMLElement } {
  const body = h('div', { class: 'chart-body' });
  const root = h('section', { class: 'card chart', 'data-testid': 'chart', 'data-points': String(points), 'aria-label': title }, h('h2', {}, title), body);
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

type Series = { label: string; values: (number | null)[] }[];
interface SeriesOptions {
  unit?: string;
  aggregate?: Aggregate;
  format?: (v: number) => string;
}

export type ChartSpec =
  | { kind: 'series'; title: string; xs: number[]; series: Series; o?: SeriesOptions }
  | { kind: 'bars'; title: string; rows: { label: string; value: number; tone?: 'bad' | 'good' }[] };

/** Charts with the same key can be updated in place (same kind, title and series). */
export const chartKey = (c: ChartSpec) => (c.kind === 'series' ? `series|${c.title}|${c.series.map((s) => s.label).join('|')}` : `bars|${c.title}`);

export const renderChart = (c: ChartSpec): HTMLElement => {
  const root = c.kind === 'series' ? timeSeries(c.title, c.xs, c.series, c.o) : bars(c.title, c.rows);
  root.setAttribute('data-key', chartKey(c));
  return root;
};

/** Puts new data into a drawn chart (a series chart keeps its canvas, cursor and size; bars are redrawn). */
export function updateChart(root: HTMLElement, c: ChartSpec) {
  if (c.kind === 'series') root.dispatchEvent(new CustomEvent<ChartSpec>('parley:update', { detail: c }));
  else root.replaceWith(renderChart(c));
}

export function timeSeries(title: string, xs: number[], series: Series, o: SeriesOptions = {}): HTMLElement {
  const unit = o.unit ?? '';
  const how = o.aggregate ?? 'sum';
  const fmt = o.format ?? ((v: number) => `${Math.round(v * 100) / 100}${unit}`);
  const countPoints = (ss: Series) => ss.reduce((n, s) => n + s.values.filter((v) => v !== null && v !== 0).length, 0);
  const { root, body } = card(title, countPoints(series));
  if (series.length === 0) {
    body.append(h('p', { class: 'empty' }, 'No data in this window yet.'));
    return root;
  }
  // The legend names each series with its total (or peak) over the window; hovering shows the value at the cursor.
  const labels = (ss: Series) =>
    ss.map((s) => {
      const a = aggregate(s.values, how);
      return a === null ? s.label : `${s.label} · ${how === 'sum' ? 'total' : 'peak'} ${fmt(a)}`;
    });
  const aligned = (xv: number[], ss: Series) => [xv.map((x) => x / 1000), ...ss.map((s) => s.values)] as uPlot.AlignedData;
  let data = aligned(xs, series);
  let last = lastIndexWithData(series);
  const opts: uPlot.Options = {
    width: 460,
    height: HEIGHT,
    series: [
      {},
      ...labels(series).map((label, i) => ({
        label,
        stroke: COLORS[i % COLORS.length],
        fill: `${COLORS[i % COLORS.length]}14`,
        width: 2,
        spanGaps: true,
        points: { show: true, size: 4 },
        value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? '–' : fmt(v)),
      })),
    ],
    // x ticks far enough apart that a tick with its date (the first, each new day) does not run into the next
    axes: [{ space: 90 }, { values: (_u, vals) => vals.map((v) => `${v}${unit}`), size: 56 }],
    legend: { show: true, live: true },
    hooks: {
      // What uPlot actually drew: non-empty points inside each series' visible index range.
      draw: [(u) => root.setAttribute('data-drawn', String(drawnPoints(u)))],
      // Away from the cursor, the legend shows the latest bucket with data rather than dashes.
      setCursor: [(u) => u.cursor.idx == null && last >= 0 && u.setLegend({ idx: last })],
      ready: [(u) => last >= 0 && u.setLegend({ idx: last })],
    },
  };
  let plot: uPlot | undefined;
  root.addEventListener('parley:update', (e) => {
    const next = (e as CustomEvent<ChartSpec>).detail;
    if (next.kind !== 'series') return;
    data = aligned(next.xs, next.series);
    last = lastIndexWithData(next.series);
    root.setAttribute('data-points', String(countPoints(next.series)));
    if (!plot) return; // not drawn yet: it will be, with this data
    const text = labels(next.series);
    plot.series.forEach((s, i) => i > 0 && (s.label = text[i - 1]));
    root.querySelectorAll('.u-legend .u-series .u-label').forEach((l, i) => i > 0 && (l.textContent = text[i - 1]));
    plot.setData(data);
    if (plot.cursor.idx == null && last >= 0) plot.setLegend({ idx: last });
  });
  // uPlot draws at a fixed size: render after insertion at the card's width, and follow the card as it resizes.
  requestAnimationFrame(() => {
    if (!root.isConnected) return;
    // `width` is the plot's own width: adding the plot can itself change the card's (a page scrollbar appears).
    let width = Math.max(200, body.clientWidth);
    const drawn = new uPlot(Object.assign({}, opts, { width }), data, body);
    plot = drawn;
    const resize = new ResizeObserver(() => {
      const next = Math.max(200, body.clientWidth);
      if (next === width || body.clientWidth === 0) return;
      width = next;
      drawn.setSize({ width, height: HEIGHT });
    });
    resize.observe(body);
    root.addEventListener(
      'parley:destroy',
      () => {
        resize.disconnect();
        drawn.destroy();
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

export function chartSpecs(s: Summary): ChartSpec[] {
  const msgSeries = Object.entries(s.messages).map(([label, values]) => ({ label, values }));
  const tokenSeries = Object.entries(s.tokenSeries).map(([model, values]) => ({ label: model, values }));
  const proactiveSeries = [
    { label: 'accepted', values: s.proactive.accepted },
    ...Object.entries(s.proactive.blockedSeries).map(([reason, values]) => ({ label: `blocked: ${reason}`, values })),
  ];
  const ms = (v: number) => fmtMs(v);
  return [
    { kind: 'series', title: 'Messages per channel', xs: s.buckets, series: msgSeries },
    {
      kind: 'series',
      title: 'LLM latency (p50 / p95)',
      xs: s.buckets,
      series: [
        { label: 'p50', values: s.llm.p50 },
        { label: 'p95', values: s.llm.p95 },
      ],
      o: { aggregate: 'max', format: ms },
    },
    { kind: 'series', title: 'Tokens per model', xs: s.buckets, series: tokenSeries },
    { kind: 'series', title: 'Proactive: accepted vs blocked by reason', xs: s.buckets, series: proactiveSeries },
    // Counts of different size get their own charts (each its own axis): 4 failures stay visible next to 60 calls.
    { kind: 'series', title: 'Tool failures', xs: s.buckets, series: [{ label: 'failures', values: s.toolFailures }] },
    { kind: 'series', title: 'LLM calls', xs: s.buckets, series: [{ label: 'calls', values: s.llm.calls }] },
    {
      kind: 'series',
      title: 'Cost',
      xs: s.buckets,
      series: [{ label: 'LLM + WhatsApp', values: s.cost.series }],
      o: { format: (v) => (v === 0 ? '0' : v < 0.01 ? v.toFixed(4) : v.toFixed(2)) },
    },
    {
      kind: 'bars',
      title: 'Tool calls by name',
      rows: Object.entries(s.tools).flatMap(([name, t]) => [
        { label: `${name}`, value: t.invoked },
        ...(t.failed ? [{ label: `${name} failed`, value: t.failed, tone: 'bad' as const }] : []),
      ]),
    },
    {
      kind: 'bars',
      title: 'Confirmations',
      rows: Object.entries(s.confirmations).map(([label, value]) => ({
        label,
        value,
        tone: label === 'approved' ? ('good' as const) : label === 'requested' ? undefined : ('bad' as const),
      })),
    },
    {
      kind: 'bars',
      title: 'WhatsApp delivery',
      rows: Object.entries(s.whatsappStatuses).map(([label, value]) => ({ label, value, tone: label === 'failed' ? ('bad' as const) : undefined })),
    },
  ];
}
