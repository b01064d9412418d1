// One simulated customer on WhatsApp, through the real webhook path: each message is a Meta webhook POST signed with
// the app secret, a confirmation is answered with its Yes/No button, and what the customer received is test mode's
// WhatsApp outbox (the mock sender that stands for the Graph API). What it received is kept as widget frames (a text
// is a message; buttons are a confirmation card; telemetry gives the answers and the handoffs), so the same checks run.
import { createHash } from 'node:crypto';
import { HANDOFF_TEXTS } from '../whatsapp/channel.ts';
import { signPayload } from '../whatsapp/signature.ts';
import type { SessionFrame } from './frames.ts';
import {
  countOf,
  SessionError,
  telemetryEvents,
  turnOver,
  waitFor,
  type Session,
  type SessionTarget,
  type TelemetryEvent,
  type WhatsAppTarget,
} from './turns.ts';

interface OutboxEntry {
  id: string;
  to: string;
  type: string;
  text: string;
  sentAt: number;
}

/** A number of its own for each customer (from the externalId), unless the scenario names one. */
export function phoneFor(externalId: string): string {
  const n = BigInt(`0x${createHash('sha256').update(externalId).digest('hex').slice(0, 12)}`) % 10_000_000n;
  return `+1555${n.toString().padStart(7, '0')}`;
}

/** A Meta webhook body with one inbound message for the business number. */
export function inboundBody(phoneNumberId: string, from: string, message: Record<string, unknown>, seq: number) {
  const wamid = `wamid.parley-test.${from}.${Date.now().toString(36)}.${seq}`;
  const full = Object.assign({ from, id: wamid, timestamp: String(Math.floor(Date.now() / 1000)) }, message);
  const value = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: phoneNumberId, phone_number_id: phoneNumberId },
    contacts: [{ wa_id: from, profile: { name: 'Scenario customer' } }],
    messages: [full],
  };
  return { object: 'whatsapp_business_account', entry: [{ id: 'parley-test', changes: [{ field: 'messages', value }] }] };
}

const STATUS_OF: Record<string, 'human' | 'assistant'> = { 'handoff.requested': 'human', 'handoff.released': 'assistant' };
const NOTICES = new Set<string>(Object.values(HANDOFF_TEXTS));

export async function openWhatsAppSession(
  target: SessionTarget & { whatsapp: WhatsAppTarget },
  customer: { externalId: string; phone?: string },
): Promise<Session> {
  const wa = target.whatsapp;
  const deadlineMs = target.deadlineMs ?? 30_000;
  const phone = customer.phone ?? phoneFor(customer.externalId);
  const digits = phone.replace(/\D/g, '');
  const frames: SessionFrame[] = [];
  const seen = new Set<string>();
  let conversationId: string | undefined;
  let seq = 0;

  const post = async (message: Record<string, unknown>) => {
    const raw = JSON.stringify(inboundBody(wa.phoneNumberId, digits, message, ++seq));
    const res = await fetch(`${target.url}${wa.webhookPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signPayload(raw, wa.appSecret) },
      body: raw,
    });
    if (!res.ok) throw new SessionError(`the WhatsApp webhook answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  };
  const outbox = async (): Promise<OutboxEntry[]> => {
    const res = await fetch(`${target.url}/__test__/whatsapp/outbox`);
    if (!res.ok) throw new SessionError(`the test-mode WhatsApp outbox answered ${res.status}`);
    return ((await res.json()) as { messages: OutboxEntry[] }).messages.filter((m) => m.to.replace(/\D/g, '') === digits);
  };
  const events = async (): Promise<TelemetryEvent[]> => (conversationId ? telemetryEvents(target, conversationId) : []);

  const frameOfSent = async (m: OutboxEntry): Promise<SessionFrame | undefined> => {
    if (NOTICES.has(m.text)) return undefined; // a handoff's notice: telemetry gives the status
    if (m.type !== 'buttons') return { type: 'message', id: m.id, role: 'assistant', text: m.text, at: m.sentAt, sources: [] };
    const pending = conversationId ? await wa.pendingConfirmation(conversationId) : undefined;
    if (!pending) return undefined; // answered meanwhile (by a timeout): its outcome still shows
    return { type: 'confirm', id: pending.id, name: pending.name, args: pending.args, summary: m.text.replace(/\s*\[buttons:.*\]$/, '') };
  };
  const frameOfEvent = (e: TelemetryEvent): SessionFrame | undefined => {
    if (STATUS_OF[e.type]) return { type: 'status', mode: STATUS_OF[e.type], at: e.at };
    const outcome = /^confirmation\.(approved|denied|expired|cancelled)$/.exec(e.type)?.[1] as 'approved' | 'denied' | 'expired' | 'cancelled' | undefined;
    return outcome ? { type: 'confirmation', id: String(e.data.id), outcome, at: e.at } : undefined;
  };
  /**
   * Appends what arrived since the last look, in the order it happened (frames only grow: windows stay valid), and
   * returns the telemetry it read: whether the turn is over is judged on the same reading the frames come from.
   */
  const refresh = async (): Promise<TelemetryEvent[]> => {
    conversationId ??= await wa.conversationOf(phone);
    const fresh: { at: number; frame: SessionFrame }[] = [];
    for (const m of await outbox()) {
      if (seen.has(`m:${m.id}`)) continue;
      seen.add(`m:${m.id}`);
      const frame = await frameOfSent(m);
      if (frame) fresh.push({ at: m.sentAt, frame });
    }
    const now = await events();
    for (const e of now) {
      const frame = seen.has(`e:${e.id}`) ? undefined : frameOfEvent(e);
      seen.add(`e:${e.id}`);
      if (frame) fresh.push({ at: e.at, frame });
    }
    frames.push(...fresh.sort((a, b) => a.at - b.at).map((f) => f.frame));
    return now;
  };
  const answered = new Set<string>();
  const pendingConfirm = () =>
    frames.find(
      (f): f is Extract<SessionFrame, { type: 'confirm' }> =>
        f.type === 'confirm' && !answered.has(f.id) && !frames.some((g) => g.type === 'confirmation' && g.id === f.id),
    );
  const withHuman = () => frames.filter((f) => f.type === 'status').at(-1)?.mode === 'human';
  const replies = () => frames.filter((f) => f.type === 'message').length;
  const settle = async (act: () => Promise<void>) => {
    const ended = countOf(await refresh(), 'turn.ended');
    await act();
    await waitFor(deadlineMs, 'the end of the turn (WhatsApp)', async () => {
      const now = await refresh();
      if (pendingConfirm()) return true;
      return (conversationId !== undefined && turnOver(now, ended, replies(), withHuman())) || undefined;
    });
  };

  return {
    get conversationId() {
      return conversationId;
    },
    frames,
    say: (text) => settle(() => post({ type: 'text', text: { body: text } })),
    async confirm(approve) {
      const pending = pendingConfirm();
      if (!pending) return false;
      answered.add(pending.id);
      const reply = { id: `confirm:${pending.id}:${approve ? 'yes' : 'no'}`, title: approve ? 'Yes' : 'No' };
      await settle(() => post({ type: 'interactive', interactive: { type: 'button_reply', button_reply: reply } }));
      return true;
    },
    withHuman,
    async tools() {
      if (!conversationId) return [];
      if (!target.toolCalls) throw new SessionError('WhatsApp scenarios need the tool calls of the store (an embedded Parley)');
      return target.toolCalls(conversationId);
    },
    close: () => undefined,
  };
}
