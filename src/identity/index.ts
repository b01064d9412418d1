import type { Services } from '../services.ts';
import { createIdentityTokens } from './identity-token.ts';
import { createMagicLinks } from './magic-links.ts';
import { createSessionTokens } from './session-token.ts';
import { createVisitorTokens } from './visitor-token.ts';

export function createIdentity(services: Services) {
  const { config, clock, store, secret } = services;
  const { identity } = config;
  return {
    tokens: createSessionTokens({ tokenSecret: identity.token_secret, serviceSecret: secret, ttlMinutes: identity.session_ttl_minutes, clock }),
    links: createMagicLinks({ store, clock, ttlMinutes: identity.magic_link_ttl_minutes }),
    identityTokens: createIdentityTokens({
      secrets: [identity.jwt_secret, identity.jwt_previous_secret],
      maxLifetimeHours: identity.jwt_max_lifetime_hours,
      clock,
    }),
    visitorTokens: createVisitorTokens({ serviceSecret: secret, ttlDays: identity.visitor_token_ttl_days, clock }),
  };
}
