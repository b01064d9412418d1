// What a customer waiting for a person is told (issue 35): outside `handoff.business_hours`, when the team is back;
// inside them, the usual wait (the median first agent reply time of recent handoffs, from the stored telemetry, so
// every node of a cluster says the same); once no agent answered within `handoff.offline_after_minutes`, that the
// team will reply by email or here. Whether to offer the email form depends on the channel (web) and on whether the
// customer already left an address.
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../logger.ts';
import type { Customer, HandoffInfo } from '../store/model.ts';
import type { TelemetryStore } from '../store/repos.ts';
import { openness } from './business-hours.ts';

export type HandoffNotice = { kind: 'closed'; timeZone: string; backAt?: number } | { kind: 'open'; expectedWaitMs?: number } | { kind: 'offline' };

/** Recent handoffs this old at most count for the expected wait. */
export const EXPECTED_WAIT_WINDOW_MS = 7 * 24 * 3600_000;

export interface HandoffOutlook {
  /** What a new handoff's customer is told now: closed (and when back), or open (and the usual wait). */
  atHandoff(): Promise<HandoffNotice>;
  /** What a customer is told about a handoff under way (none once an agent wrote). */
  during(handoff: HandoffInfo | undefined): Promise<HandoffNotice | undefined>;
}

export const median = (xs: number[]): number | undefined => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : Math.round((s[mid - 1] + s[mid]) / 2);
};

export function createHandoffOutlook(o: {
  config: Config['handoff'];
  clock: Clock;
  telemetry: Pick<TelemetryStore, 'events'>;
  logger: Logger;
}): HandoffOutlook {
  const expectedWait = async (): Promise<number | undefined> => {
    const now = o.clock.now();
    try {
      const page = await o.telemetry.events({ type: 'handoff.joined', since: now - EXPECTED_WAIT_WINDOW_MS, until: now, limit: 200, order: 'desc' });
      const waits = page.items.map((e) => (e.data as { waitedMs?: unknown } | undefined)?.waitedMs).filter((w): w is number => typeof w === 'number');
      return median(waits.slice(0, o.config.expected_wait_sample));
    } catch (err) {
      o.logger.warn({ err }, 'the expected wait could not be read: the customer is told without it');
      return undefined;
    }
  };
  const atHandoff = async (): Promise<HandoffNotice> => {
    const bh = o.config.business_hours;
    const now = openness(bh, o.clock.now());
    if (!now.open) return Object.assign({ kind: 'closed' as const, timeZone: bh!.time_zone }, now.backAt === undefined ? {} : { backAt: now.backAt });
    const wait = await expectedWait();
    return wait === undefined ? { kind: 'open' } : { kind: 'open', expectedWaitMs: wait };
  };
  return {
    atHandoff,
    during: async (handoff) => {
      if (!handoff || handoff.agent) return undefined;
      return handoff.offlineAt !== undefined ? { kind: 'offline' } : atHandoff();
    },
  };
}

/** Whether the customer is offered the email form with this notice: not while the team is open, not twice. */
export const asksEmail = (notice: HandoffNotice, customer: Pick<Customer, 'contact'> | undefined) => notice.kind !== 'open' && !customer?.contact;
