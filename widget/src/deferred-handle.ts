// The handle `Parley.init` returns at once, while the widget waits for its language's words (locales.ts): what the
// page asks of it meanwhile (open, send, a fresh token, destroy) is done, in order, once the widget is there.

/** What `Parley.init` returns: the page's handle on the widget. */
export interface WidgetHandle {
  open(): void;
  close(): void;
  destroy(): void;
  send(text: string): void;
  /** Hands the widget a fresh session token; it reconnects at once if the old one had ended the session. */
  setAuthToken(token: string): void;
}

export function deferredHandle() {
  let real: WidgetHandle | undefined;
  let destroyed = false;
  const queued: ((h: WidgetHandle) => void)[] = [];
  const call = (fn: (h: WidgetHandle) => void) => (real ? fn(real) : queued.push(fn));
  const handle: WidgetHandle = {
    open: () => call((h) => h.open()),
    close: () => call((h) => h.close()),
    send: (text) => call((h) => h.send(text)),
    setAuthToken: (token) => call((h) => h.setAuthToken(token)),
    destroy() {
      destroyed = true;
      queued.length = 0;
      real?.destroy();
    },
  };
  return {
    handle,
    /** Starts the widget (unless destroyed meanwhile) and hands it what was asked so far. */
    attach(start: () => WidgetHandle) {
      if (destroyed || real) return;
      real = start();
      for (const fn of queued.splice(0)) fn(real);
    },
  };
}
