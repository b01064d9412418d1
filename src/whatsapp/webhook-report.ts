// What a webhook body held that starts no turn, made visible: the parts
// Parley cannot use (one warning line per body, naming each part's type, and
// a `whatsapp.unusable` telemetry event per type, which /metrics counts), and
// the quiet events (removed reactions, edits, deletions, system notices: one
// `whatsapp.event` each, at debug level in the log).
import type { Logger } from '../logger.ts';
import type { NewEvent } from '../services.ts';
import type { IgnoredPart, QuietEvent } from './webhook-payload.ts';

export function reportWebhookParts(o: { ignored: IgnoredPart[]; quiet: QuietEvent[]; log: Logger; telemetry: { event(e: NewEvent): void } }): void {
  const { ignored, quiet, log, telemetry } = o;
  if (ignored.length) {
    const byType = new Map<string, { part: IgnoredPart['part']; type: string; reason: string; count: number; ids: string[] }>();
    for (const i of ignored) {
      const key = `${i.part}\u0000${i.type}\u0000${i.reason}`;
      const entry = byType.get(key) ?? { part: i.part, type: i.type, reason: i.reason, count: 0, ids: [] };
      entry.count++;
      if (i.id && entry.ids.length < 10) entry.ids.push(i.id);
      byType.set(key, entry);
    }
    const groups = [...byType.values()];
    log.warn({ unusable: groups }, `webhook parts Parley cannot use: ${groups.map((g) => `${g.count} ${g.part} ${g.type} (${g.reason})`).join(', ')}`);
    for (const g of groups) {
      telemetry.event({
        type: 'whatsapp.unusable',
        channel: 'whatsapp',
        data: { part: g.part, partType: g.type, reason: g.reason, count: g.count, ids: g.ids },
      });
    }
  }
  for (const q of quiet) {
    log.debug({ event: q.type, waMessageId: q.waMessageId, originalId: q.originalId, systemType: q.systemType }, 'WhatsApp event (no turn)');
    telemetry.event({
      type: 'whatsapp.event',
      channel: 'whatsapp',
      data: {
        event: q.type,
        waMessageId: q.waMessageId,
        ...(q.originalId ? { originalId: q.originalId } : {}),
        ...(q.systemType ? { systemType: q.systemType } : {}),
        ...(q.content ? { content: q.content } : {}),
      },
    });
  }
}
