// One simulated customer on the widget protocol (GET /widget/ws), as a browser would be: init, messages, answers to
// confirmation cards. A turn is over when telemetry says so (`turn.ended`) and its replies have arrived, or when a
// confirmation waits for the customer, or when a person has the conversation.
import WebSocket from 'ws';
import type { WidgetServerFrame as ServerFrame } from '../../sdk/src/widget-protocol.ts';
import { parseFrame, type SessionFrame } from './frames.ts';
import { countOf, SessionError, telemetryEvents, turnOver, waitFor as waitWithin, type Session, type SessionTarget } from './turns.ts';

export async function openSession(target: SessionTarget, customer: { externalId: string; verified: boolean }): Promise<Session> {
  const deadlineMs = target.deadlineMs ?? 30_000;
  const socket = new WebSocket(`${target.url.replace(/^http/, 'ws')}/widget/ws`);
  const frames: SessionFrame[] = [];
  socket.on('message', (d) => {
    const frame = parseFrame(JSON.parse(d.toString()));
    if (frame) frames.push(frame);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const send = (frame: Record<string, unknown>) => socket.send(JSON.stringify(frame));
  const waitFor = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined) => waitWithin(deadlineMs, what, probe);
  send(
    customer.verified
      ? { type: 'init', customerId: customer.externalId, email: `${customer.externalId.replace(/[^\w.-]/g, '_')}@scenario.test` }
      : { type: 'init' },
  );
  const ready = await waitFor('ready', () => {
    const err = frames.find((f) => f.type === 'error');
    if (err && err.type === 'error') throw new SessionError(`the widget refused the customer: ${err.code}: ${err.message}`);
    return frames.find((f) => f.type === 'ready');
  });
  if (ready.type !== 'ready') throw new SessionError('no ready frame');
  const conversationId = ready.conversationId;

  const events = () => telemetryEvents(target, conversationId);
  const answered = new Set<string>();
  const pendingConfirm = () =>
    frames.find(
      (f): f is Extract<ServerFrame, { type: 'confirm' }> =>
        f.type === 'confirm' && !answered.has(f.id) && !frames.some((g) => g.type === 'confirmation' && g.id === f.id),
    );
  const withHuman = () => frames.filter((f) => f.type === 'status').at(-1)?.mode === 'human';
  const replies = () => frames.filter((f) => f.type === 'message').length;

  /** Waits until the turn started by `act` is over (or waits for the customer). */
  const settle = async (act: () => void) => {
    const before = await events();
    const ended = countOf(before, 'turn.ended');
    act();
    await waitFor('the end of the turn', async () => {
      if (pendingConfirm()) return true;
      return turnOver(await events(), ended, replies(), withHuman()) || undefined;
    });
  };

  let seq = 0;
  return {
    conversationId,
    frames,
    async say(text: string) {
      const id = `scn-${++seq}`;
      await settle(() => send({ type: 'message', id, text }));
    },
    async confirm(approve: boolean): Promise<boolean> {
      const pending = pendingConfirm();
      if (!pending) return false;
      answered.add(pending.id);
      await settle(() => send({ type: 'confirm', id: pending.id, approve }));
      return true;
    },
    withHuman,
    async tools() {
      if (target.toolCalls) return target.toolCalls(conversationId);
      // A running Parley: the names from telemetry, the arguments of confirmed calls from their cards.
      const list = (await events()).filter((e) => e.type === 'tool.invoked');
      const cards = frames.filter((f) => f.type === 'confirm');
      return list.map((e) => {
        const name = String(e.data.name);
        const card = cards.find((c) => c.name === name);
        return { name, args: card?.args as Record<string, unknown> | undefined, ok: undefined };
      });
    },
    close: () => socket.close(),
  };
}
