// The widget without its DOM: state, socket, re-sending. index.ts hands it a
// render function; unit tests hand it a fake WebSocket and fake timers.
import type { WidgetClientFrame } from '../../sdk/src/widget-protocol.ts';
import { connect, type ConnectionOptions } from './connection.ts';
import { initialState, reduce, unacknowledged, type Action, type WidgetState } from './state.ts';

export interface ControllerOptions {
  url: string;
  init: () => WidgetClientFrame;
  render: (state: WidgetState) => void;
  newId: () => string;
  now?: () => number;
  WebSocketImpl?: ConnectionOptions['WebSocketImpl'];
  setTimer?: ConnectionOptions['setTimer'];
}

export const NOT_CONNECTED = 'Not connected: your answer was not sent. Try again once the status is Connected.';

export function createController(o: ControllerOptions) {
  let state: WidgetState = initialState;
  const dispatch = (a: Action) => {
    state = reduce(state, a);
    o.render(state);
  };
  const connection = connect({
    url: o.url,
    init: o.init,
    onFrame: (frame) => dispatch({ type: 'frame', frame }),
    onStatus: (status) => dispatch({ type: 'status', status }),
    onReady: () => {
      for (const b of unacknowledged(state)) connection.send({ type: 'message', id: b.id, text: b.text });
    },
    WebSocketImpl: o.WebSocketImpl,
    setTimer: o.setTimer,
  });
  return {
    state: () => state,
    send(text: string) {
      const id = o.newId();
      dispatch({ type: 'sent', id, text, at: (o.now ?? Date.now)() });
      // Not connected: kept as unacknowledged and sent after the next `ready`.
      connection.send({ type: 'message', id, text });
    },
    /** Returns false (and shows why) when the answer could not be sent. */
    answer(id: string, approve: boolean): boolean {
      if (!connection.send({ type: 'confirm', id, approve })) {
        dispatch({ type: 'error', message: NOT_CONNECTED });
        return false;
      }
      dispatch({ type: 'answered', id, approve });
      return true;
    },
    panel(open: boolean) {
      dispatch({ type: 'panel', open });
    },
    close: () => connection.close(),
  };
}
