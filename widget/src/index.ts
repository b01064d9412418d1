// Parley's embeddable widget. One script tag:
//   <script src="https://parley.example.com/widget.js" data-server-url="…"
//           data-customer-id="…" data-auth-token="…"></script>
// or window.Parley.init({ serverUrl, customerId, authToken }).
import type { WidgetClientFrame } from '../../sdk/src/widget-protocol.ts';
import { connect } from './connection.ts';
import { initialState, reduce, unacknowledged, type Action, type WidgetState } from './state.ts';
import { createView } from './view.ts';

export interface InitOptions {
  serverUrl: string;
  customerId: string;
  authToken?: string;
  /** Anonymous development mode only (identity.allow_anonymous). */
  email?: string;
  container?: HTMLElement;
  open?: boolean;
}

export interface WidgetHandle {
  open(): void;
  close(): void;
  destroy(): void;
  send(text: string): void;
}

const newId = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`);

function wsUrl(serverUrl: string): string {
  const u = new URL(serverUrl, location.href);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/$/, '')}/widget/ws`;
  u.search = '';
  return u.toString();
}

export function init(o: InitOptions): WidgetHandle {
  let state: WidgetState = initialState;
  const view = createView(o.container, {
    onSend: (text) => handle.send(text),
    onAnswer: (id, approve) => {
      if (connection.send({ type: 'confirm', id, approve })) dispatch({ type: 'answered', id, approve });
    },
  });
  const dispatch = (a: Action) => {
    state = reduce(state, a);
    view.render(state);
  };
  const initFrame = (): WidgetClientFrame =>
    o.authToken ? { type: 'init', customerId: o.customerId, authToken: o.authToken } : { type: 'init', customerId: o.customerId, email: o.email };
  const connection = connect({
    url: wsUrl(o.serverUrl),
    init: initFrame,
    onFrame: (frame) => dispatch({ type: 'frame', frame }),
    onStatus: (status) => dispatch({ type: 'status', status }),
    onReady: () => {
      for (const b of unacknowledged(state)) connection.send({ type: 'message', id: b.id, text: b.text });
    },
  });
  const handle: WidgetHandle = {
    open: view.open,
    close: view.close,
    destroy() {
      connection.close();
      view.destroy();
    },
    send(text) {
      const id = newId();
      dispatch({ type: 'sent', id, text, at: Date.now() });
      connection.send({ type: 'message', id, text });
    },
  };
  view.render(state);
  if (o.open) view.open();
  return handle;
}

declare global {
  interface Window {
    Parley?: { init: typeof init; instance?: WidgetHandle };
  }
}

const script = document.currentScript as HTMLScriptElement | null;
window.Parley = { init };
if (script?.dataset.customerId) {
  const serverUrl = script.dataset.serverUrl || new URL(script.src, location.href).origin;
  window.Parley.instance = init({ serverUrl, customerId: script.dataset.customerId, authToken: script.dataset.authToken, email: script.dataset.email });
}
