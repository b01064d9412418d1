// A visitor's token (`identity.visitors`): kept in localStorage per site and Parley server, sent with each `init`,
// replaced by the one each `ready` brings, and forgotten once a `ready` answers a signed-in init (the visitor's
// conversation has joined the customer's by then). Storage that throws (private modes) just means no memory.
import type { WidgetClientFrame, WidgetServerFrame } from '../../sdk/src/widget-protocol.ts';

type Store = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export interface VisitorMemory {
  /** The init frame with the kept visitor token, and without empty fields. */
  init(frame: WidgetClientFrame): WidgetClientFrame;
  /** Every frame from the server: a `ready` updates what is kept. */
  onFrame(frame: WidgetServerFrame, signedIn: boolean): void;
}

function localStore(): Store | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

export function visitorMemory(serverUrl: string, store: Store | undefined = localStore()): VisitorMemory {
  const key = `parley.visitor:${serverUrl}`;
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch {
      return undefined;
    }
  };
  return {
    init(frame) {
      if (frame.type !== 'init') return frame;
      const out: WidgetClientFrame = { type: 'init' };
      if (frame.customerId) out.customerId = frame.customerId;
      if (frame.authToken) out.authToken = frame.authToken;
      if (frame.email) out.email = frame.email;
      if (frame.locale) out.locale = frame.locale;
      const kept = attempt(() => store?.getItem(key));
      if (kept) out.visitorToken = kept;
      return out;
    },
    onFrame(frame, signedIn) {
      if (frame.type !== 'ready') return;
      if (frame.visitorToken) attempt(() => store?.setItem(key, frame.visitorToken!));
      else if (signedIn) attempt(() => store?.removeItem(key));
    },
  };
}
