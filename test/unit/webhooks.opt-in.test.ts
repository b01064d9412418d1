// The opt-in webhook event `handoff.offline`, its pure parts: which endpoints want a type (endpointWants), the event
// an offline output makes, what its dead letter keeps, and that an endpoint's `events` may name it in the config.
import { describe, expect, it } from 'vitest';
import { OPT_IN_WEBHOOK_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from '../../sdk/src/agent-api.ts';
import { parseConfig } from '../../src/config/load.ts';
import { deadLetterPayload } from '../../src/webhooks/dead-letter.ts';
import { conversationEvent, endpointWants } from '../../src/webhooks/events.ts';

const MIN = 60_000;
const meta = { conversationId: 'conv_web_u', customerId: 'u', externalId: 'anon:u', channel: 'web' as const };

describe('which endpoints get a webhook event type', () => {
  it('no filter: every type but the opt-in ones; a filter: exactly what it lists', () => {
    expect(OPT_IN_WEBHOOK_EVENT_TYPES).toEqual(['handoff.offline']);
    for (const type of WEBHOOK_EVENT_TYPES) expect(endpointWants(undefined, type), type).toBe(type !== 'handoff.offline');
    expect(endpointWants(['handoff.offline'], 'handoff.offline')).toBe(true);
    expect(endpointWants(['handoff.requested', 'handoff.released'], 'handoff.offline')).toBe(false);
    expect(endpointWants(['handoff.offline'], 'handoff.requested')).toBe(false);
  });
});

describe('the handoff.offline event', () => {
  it('is made from the offline output with since and the whole minutes waited (more when it fell due while Parley was down)', () => {
    const since = Date.UTC(2026, 10, 28, 9, 0);
    const o = { type: 'handoff' as const, id: `o:${since}`, phase: 'offline' as const, since };
    expect(conversationEvent(meta, { o, at: since + 10 * MIN })).toEqual({
      type: 'handoff.offline',
      createdAt: since + 10 * MIN,
      data: { ...meta, since, waitedMinutes: 10 },
    });
    expect(conversationEvent(meta, { o, at: since + 25 * MIN + 59_999 })?.data).toMatchObject({ waitedMinutes: 25 });
  });

  it('its dead letter keeps since and waitedMinutes (times, not words)', () => {
    const event = { id: 'evt_1', type: 'handoff.offline' as const, createdAt: 5, data: { ...meta, since: 1, waitedMinutes: 10 } };
    expect(deadLetterPayload({ url: 'https://h.example', event }).event.data).toEqual(event.data);
  });

  it('an endpoint’s events may name it in the config; a misspelt type is refused at start', () => {
    const yaml = (type: string) =>
      `webhooks:\n  endpoints:\n    - url: https://h.example/in\n      secret: hook-secret-0123456789abcdef\n      events: [${type}]\n`;
    expect(parseConfig(yaml('handoff.offline'), {}).webhooks.endpoints[0].events).toEqual(['handoff.offline']);
    expect(() => parseConfig(yaml('handoff.offlin'), {})).toThrow(/webhooks\.endpoints\.0\.events\.0/);
  });
});
