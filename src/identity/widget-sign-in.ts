// Who a widget's `init` is: a customer signed in with an identity token (a JWT the integrator signs) or a session
// token (magic link), a visitor (`identity.visitors`: no token, or its visitor token), or an anonymous development
// session (`identity.allow_anonymous`). A refusal's reason goes to the log only; the widget gets `unauthorized`.
// A known identity token costs no store round trip (a bounded externalId → customerId cache) and no rate limit: it is
// the integrator's own signature. A sign-in that also carries a visitor token moves the visitor's conversation into
// the customer's (once).
import type { WidgetInitFrame } from '../../sdk/src/widget-protocol.ts';
import { isAnonymousExternalId, resumeAnonymous } from '../customers/anonymous.ts';
import type { Customer, CustomerRepo } from '../customers/repo.ts';
import { isVisitorExternalId } from '../store/model.ts';
import { createRateLimiter } from '../limits/rate-limiter.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { looksLikeJwt, type IdentityTokens } from './identity-token.ts';
import type { VisitorTokens } from './visitor-token.ts';
import type { Visitors } from './visitors.ts';

export type SignedIn = Pick<Customer, 'customerId' | 'externalId'>;

export type SignInResult =
  { ok: true; customer: SignedIn; visitor: boolean; visitorToken?: string } | { ok: false; code: 'unauthorized' | 'rate_limited'; message: string };

export interface SessionTokenCheck {
  verify(token: string, customerId: string): { ok: true } | { ok: false; reason: string };
}

export interface WidgetSignInDeps {
  services: Services;
  customers: CustomerRepo;
  sessionTokens: SessionTokenCheck;
  identityTokens: IdentityTokens;
  visitorTokens: VisitorTokens;
  visitors: Visitors;
  /** How many externalId → customerId pairs are kept (default 10 000). */
  cacheSize?: number;
}

const REFUSED = 'Sign-in refused';

export function createWidgetSignIn(d: WidgetSignInDeps) {
  const { config, clock } = d.services;
  const { identity } = config;
  const log: Logger = d.services.logger.child({ component: 'widget-sign-in' });
  const known = new Map<string, string>();
  const cacheSize = d.cacheSize ?? 10_000;
  const creations = createRateLimiter({ perMinute: identity.visitor_creations_per_ip_per_minute, now: clock.now });
  const refuse = (why: string, message = REFUSED): SignInResult => {
    log.info({ why }, 'widget sign-in refused');
    return { ok: false, code: 'unauthorized', message };
  };

  const remember = (externalId: string, customerId: string) => {
    if (known.size >= cacheSize) known.delete(known.keys().next().value as string);
    known.set(externalId, customerId);
  };

  const byIdentityToken = async (token: string, frame: WidgetInitFrame): Promise<SignInResult> => {
    const v = d.identityTokens.verify(token);
    if (!v.ok) return refuse(`identity token: ${v.reason}`);
    const { externalId, email, phone } = v.claims;
    if (isAnonymousExternalId(externalId) || isVisitorExternalId(externalId)) return refuse('identity token: reserved sub');
    let customerId = known.get(externalId);
    if (!customerId) {
      const c = (await d.customers.findBy('ext', externalId)) ?? (await d.customers.upsert({ externalId, email, phone }));
      customerId = c.customerId;
      remember(externalId, customerId);
    }
    if (frame.customerId !== undefined && frame.customerId !== customerId) return refuse('identity token: customerId does not match sub');
    return { ok: true, customer: { customerId, externalId }, visitor: false };
  };

  const bySessionToken = async (token: string, frame: WidgetInitFrame): Promise<SignInResult> => {
    if (!frame.customerId) return refuse('session token without customerId', 'A session token needs customerId');
    const v = d.sessionTokens.verify(token, frame.customerId);
    if (!v.ok) return refuse(`session token: ${v.reason}`, `Session token refused (${v.reason})`);
    const found = await d.customers.get(frame.customerId);
    if (!found) return refuse('session token: unknown customer', 'Unknown customer');
    return { ok: true, customer: found, visitor: false };
  };

  const asVisitor = async (frame: WidgetInitFrame, ip: string): Promise<SignInResult> => {
    const back = frame.visitorToken ? d.visitorTokens.verify(frame.visitorToken) : undefined;
    if (back && !back.ok) log.debug({ why: back.reason }, 'visitor token not accepted: a new visitor');
    let visitor = back?.ok ? await d.visitors.find(back.customerId) : undefined;
    if (!visitor) {
      const allowed = creations.take(ip);
      if (!allowed.ok)
        return {
          ok: false,
          code: 'rate_limited',
          message: `Too many new visitors from this address; try again in ${Math.ceil(allowed.retryAfterMs / 1000)} s`,
        };
      visitor = await d.visitors.create();
    }
    // A fresh token each visit: a visitor who comes back keeps theirs alive.
    return { ok: true, customer: visitor, visitor: true, visitorToken: d.visitorTokens.issue(visitor.customerId) };
  };

  /** After a sign-in that carried a visitor token: the visitor's conversation joins the customer's (logged, never fatal). */
  const mergeVisitor = async (visitorToken: string, customerId: string) => {
    const v = d.visitorTokens.verify(visitorToken);
    if (!v.ok) return log.debug({ why: v.reason }, 'visitor token at sign-in not accepted: nothing merged');
    try {
      const moved = await d.visitors.merge(v.customerId, customerId);
      if (moved > 0) {
        log.info({ visitorId: v.customerId, customerId, records: moved }, 'visitor signed in: conversation merged');
        d.services.telemetry.event({ type: 'visitor.merged', customerId, data: { visitorId: v.customerId, records: moved } });
      }
    } catch (err) {
      log.warn({ err, visitorId: v.customerId, customerId }, 'visitor conversation could not be merged');
    }
  };

  /** The locale the widget said, kept with the customer (a failure is logged: the sign-in stands). */
  const keepLocale = async (r: SignInResult, locale: string | undefined): Promise<SignInResult> => {
    if (!r.ok || !locale) return r;
    try {
      await d.customers.setLocale(r.customer.customerId, locale);
    } catch (err) {
      log.warn({ err, customerId: r.customer.customerId }, "the customer's locale could not be stored");
    }
    return r;
  };

  return {
    async signIn(frame: WidgetInitFrame, ip: string): Promise<SignInResult> {
      return keepLocale(await signInAs(frame, ip), frame.locale);
    },
  };

  async function signInAs(frame: WidgetInitFrame, ip: string): Promise<SignInResult> {
    if (frame.authToken) {
      const jwt = looksLikeJwt(frame.authToken);
      const r = jwt ? await byIdentityToken(frame.authToken, frame) : await bySessionToken(frame.authToken, frame);
      if (r.ok && frame.visitorToken && identity.visitors) await mergeVisitor(frame.visitorToken, r.customer.customerId);
      return r;
    }
    if (identity.visitors && (frame.visitorToken || !frame.email)) return asVisitor(frame, ip);
    if (identity.allow_anonymous) {
      if (!frame.email || !frame.customerId) return refuse('anonymous init without customerId and email', 'Anonymous init needs customerId and email');
      const anonymous = await resumeAnonymous(d.customers, { customerId: frame.customerId, email: frame.email });
      return anonymous.ok ? { ok: true, customer: anonymous.customer, visitor: false } : refuse(`anonymous: ${anonymous.reason}`, anonymous.reason);
    }
    return refuse('no token', 'authToken is required (anonymous widget sessions are disabled)');
  }
}

export type WidgetSignIn = ReturnType<typeof createWidgetSignIn>;
