// Parley's embeddable widget. One script tag:
//   <script src="https://parley.example.com/widget.js" data-server-url="…"
//           data-customer-id="…" data-auth-token="…"></script>
// or window.Parley.init({ serverUrl, customerId, authToken }).
import type { WidgetClientFrame } from '../../sdk/src/widget-protocol.ts';
import { createController } from './controller.ts';
import { initialState } from './state.ts';
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
  const view = createView(o.container, {
    onSend: (text) => controller.send(text),
    onAnswer: (id, approve) => controller.answer(id, approve),
    onPanel: (open) => controller.panel(open),
  });
  const initFrame = (): WidgetClientFrame =>
    o.authToken ? { type: 'init', customerId: o.customerId, authToken: o.authToken } : { type: 'init', customerId: o.customerId, email: o.email };
  view.render(initialState);
  const controller = createController({ url: wsUrl(o.serverUrl), init: initFrame, render: view.render, newId });
  if (o.open) view.open();
  return {
    open: view.open,
    close: view.close,
    destroy() {
      controller.close();
      view.destroy();
    },
    send: controller.send,
  };
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
