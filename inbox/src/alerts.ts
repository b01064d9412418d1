// A new handoff is announced three ways, each of which the agent can turn off (kept in localStorage): a browser
// notification, a short sound, and the waiting count in the tab's title ("(2) Parley inbox").
import { h } from './dom.ts';

export type AlertKind = 'notifications' | 'sound' | 'badge';
const LABELS: Record<AlertKind, string> = { notifications: 'Browser notifications', sound: 'Sound', badge: 'Count in the tab title' };
const key = (k: AlertKind) => `parley.inbox.${k}`;

export const alertOn = (k: AlertKind) => localStorage.getItem(key(k)) !== 'off';
const setAlert = (k: AlertKind, on: boolean) => localStorage.setItem(key(k), on ? 'on' : 'off');

const TITLE = 'Parley inbox';

export function createAlerts() {
  let audio: AudioContext | undefined;
  const beep = () => {
    try {
      audio ??= new AudioContext();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.15, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.35);
    } catch {
      // No audio device: the other alerts still say it.
    }
  };
  return {
    /** A customer is waiting for a person. */
    newHandoff(who: string, onOpen: () => void) {
      if (alertOn('sound')) beep();
      if (alertOn('notifications') && 'Notification' in window && Notification.permission === 'granted') {
        const n = new Notification('A customer is waiting for a person', { body: who, tag: 'parley-handoff' });
        n.onclick = () => {
          window.focus();
          onOpen();
          n.close();
        };
      }
    },
    title(waiting: number) {
      document.title = alertOn('badge') && waiting > 0 ? `(${waiting}) ${TITLE}` : TITLE;
    },
    /** The settings: a checkbox per alert. */
    settings(onChange: () => void): HTMLElement {
      const box = h('fieldset', { class: 'alerts' }, h('legend', {}, 'When a customer asks for a person'));
      for (const k of Object.keys(LABELS) as AlertKind[]) {
        const id = `alert-${k}`;
        const input = h('input', { type: 'checkbox', id, 'data-testid': id });
        input.checked = alertOn(k);
        input.addEventListener('change', () => {
          setAlert(k, input.checked);
          if (k === 'notifications' && input.checked && 'Notification' in window && Notification.permission === 'default')
            void Notification.requestPermission();
          onChange();
        });
        box.append(h('div', { class: 'check' }, input, h('label', { for: id }, LABELS[k])));
      }
      return box;
    },
  };
}
