// One proactive request's effects for the runner (run-machine.ts): `reserve` runs the guardrail
// transaction, which also writes the message and keeps what to run once committed; `deliver` (the
// `sending` state's entry action) runs that. A class, so a request costs one object and no named
// closures (tsx names each function assigned to a property, with a defineProperty per request).
import type { ProactiveDeliverInput, ProactiveReservation, ProactiveReserveInput } from '../../machines/proactive.ts';
import type { StoreRepos } from '../store/repos.ts';
import type { ProactiveLedger } from './ledger.ts';
import type { ProactiveEffects } from './run-machine.ts';

export interface RequestEffectsDeps {
  ledger: ProactiveLedger;
  /** Writes the message inside the reservation's transaction; returns what to run once committed. */
  prepare(tx: StoreRepos, args: ProactiveDeliverInput): Promise<() => void>;
  /** Logs an after-commit delivery that threw (the message is stored; only the live push failed). */
  onDeliverError?(err: unknown, messageId: string): void;
}

export class RequestEffects implements ProactiveEffects {
  private prepared: (() => void) | undefined;

  constructor(private readonly deps: RequestEffectsDeps) {}

  reserve({ customer, request, ...check }: ProactiveReserveInput): Promise<ProactiveReservation> {
    return this.deps.ledger.reserve(check, async (tx, messageId) => {
      try {
        this.prepared = await this.deps.prepare(tx, { messageId, customer, request });
      } catch (err) {
        throw Object.assign(new Error((err as Error).message), { name: 'DeliveryError' });
      }
    });
  }

  deliver({ messageId }: ProactiveDeliverInput): void {
    try {
      this.prepared?.();
    } catch (err) {
      this.deps.onDeliverError?.(err, messageId);
    }
  }
}
