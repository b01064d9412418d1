import type { Services } from '../services.ts';
import { createMagicLinks } from './magic-links.ts';
import { createSessionTokens } from './session-token.ts';

export function createIdentity(services: Services) {
  const { config, clock, store, secret } = services;
  return {
    tokens: createSessionTokens({ tokenSecret: config.identity.token_secret, serviceSecret: secret, ttlMinutes: config.identity.session_ttl_minutes, clock }),
    links: createMagicLinks({ store, clock, ttlMinutes: config.identity.magic_link_ttl_minutes }),
  };
}
