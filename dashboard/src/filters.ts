// The dashboard's filters: a time window (1 h, 24 h, 7 d, or a custom range) and a channel. Kept for the tab
// (sessionStorage); `query()` gives the summary's and the conversation list's query parameters.
import { h } from './dom.ts';

/** The time windows the header offers, with the largest bucket each may use (the summary fits smaller ones to the data). */
export const WINDOWS = [
  { id: '1h', label: '1 h', spanMs: 3600_000, bucketMs: 60_000 },
  { id: '24h', label: '24 h', spanMs: 24 * 3600_000, bucketMs: 30 * 60_000 },
  { id: '7d', label: '7 d', spanMs: 7 * 24 * 3600_000, bucketMs: 3 * 3600_000 },
] as const;
type WindowId = (typeof WINDOWS)[number]['id'] | 'custom';
const KEY = 'parley.filters';

interface State {
  window: WindowId;
  from?: number;
  to?: number;
  channel: '' | 'web' | 'whatsapp';
}

function load(): State {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? '{}') as Partial<State>;
    const window = s.window === 'custom' || WINDOWS.some((w) => w.id === s.window) ? s.window! : '24h';
    return { window, from: s.from, to: s.to, channel: s.channel === 'web' || s.channel === 'whatsapp' ? s.channel : '' };
  } catch {
    return { window: '24h', channel: '' };
  }
}

/** `datetime-local` value ↔ ms, in the browser's time zone. */
const toLocal = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export function createFilters(onChange: () => void) {
  const state = load();
  const save = () => sessionStorage.setItem(KEY, JSON.stringify(state));
  const picker = h('div', { class: 'window-picker', role: 'group', 'aria-label': 'Time window', 'data-testid': 'window-picker' });
  const press = () => picker.querySelectorAll('button').forEach((x) => x.setAttribute('aria-pressed', String(x.getAttribute('data-window') === state.window)));
  for (const w of WINDOWS) {
    const b = h('button', { type: 'button', 'data-window': w.id }, w.label);
    b.addEventListener('click', () => {
      state.window = w.id;
      save();
      press();
      onChange();
    });
    picker.append(b);
  }
  const now = Date.now();
  const from = h('input', { type: 'datetime-local', id: 'range-from', 'data-testid': 'range-from', value: toLocal(state.from ?? now - 24 * 3600_000) });
  const to = h('input', { type: 'datetime-local', id: 'range-to', 'data-testid': 'range-to', value: toLocal(state.to ?? now) });
  const apply = h('button', { type: 'submit', 'data-window': 'custom' }, 'Apply range');
  const range = h(
    'form',
    { class: 'range', 'aria-label': 'Custom time range', 'data-testid': 'range-form' },
    h('label', { for: 'range-from' }, 'From'),
    from,
    h('label', { for: 'range-to' }, 'To'),
    to,
    apply,
  );
  range.addEventListener('submit', (e) => {
    e.preventDefault();
    const a = new Date(from.value).getTime();
    const b = new Date(to.value).getTime();
    if (!Number.isFinite(a) || !Number.isFinite(b) || a >= b) return void to.setCustomValidity('“To” must be after “From”.');
    to.setCustomValidity('');
    Object.assign(state, { window: 'custom', from: a, to: b });
    save();
    press();
    onChange();
  });
  const channel = h(
    'select',
    { id: 'channel-filter', 'data-testid': 'channel-filter' },
    h('option', { value: '' }, 'All channels'),
    h('option', { value: 'web' }, 'Web'),
    h('option', { value: 'whatsapp' }, 'WhatsApp'),
  );
  channel.value = state.channel;
  channel.addEventListener('change', () => {
    state.channel = channel.value as State['channel'];
    save();
    onChange();
  });
  press();
  const root = h('div', { class: 'filters' }, picker, range, h('label', { for: 'channel-filter', class: 'sr-only' }, 'Channel'), channel);
  return {
    root,
    /** The window's label for the tiles ("24 h", "custom range"). */
    label: () => WINDOWS.find((w) => w.id === state.window)?.label ?? 'custom range',
    /** The summary's query (fitted to the data, at most the window's bucket) and the conversation list's channel. */
    query(at: number) {
      const w = WINDOWS.find((x) => x.id === state.window);
      const since = w ? at - w.spanMs : (state.from ?? at - 24 * 3600_000);
      const until = w ? at : (state.to ?? at);
      const bucketMs = w ? w.bucketMs : Math.max(60_000, Math.ceil((until - since) / 48 / 60_000) * 60_000);
      const channelParam = state.channel ? `&channel=${state.channel}` : '';
      return {
        summary: `since=${since}&until=${until}&bucketMs=${Math.min(86_400_000, bucketMs)}&fit=1${channelParam}`,
        channel: channelParam,
        /** The window alone (the handoffs card). */
        window: `since=${since}&until=${until}`,
      };
    },
  };
}
