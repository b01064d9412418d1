// The people who answer customers, made from the services: accounts, sessions and keys, sign-in limits, the auth
// hook of the agent API and the /api/v1/agents routes.
import type { Services } from '../services.ts';
import { createAgentAccounts, type AgentAccounts } from './accounts.ts';
import { createAgentLimits } from './limits.ts';
import { requirePrincipal } from './principal.ts';
import { agentRoutesPlugin, type AgentRoutesOptions } from './routes.ts';
import { createAgentSessions, type AgentSessions } from './sessions.ts';

export type { Principal } from './principal.ts';

export interface Agents {
  accounts: AgentAccounts;
  sessions: AgentSessions;
  /** The agent API's hook: the service secret, an agent's session (with CSRF) or key; sets `request.principal`. */
  principalHook: ReturnType<typeof requirePrincipal>;
  routes: AgentRoutesOptions;
  plugin: typeof agentRoutesPlugin;
}

export function createAgents(services: Services): Agents {
  const { store, clock } = services;
  const c = services.config.agents;
  const secret = () => services.secret;
  const accounts = createAgentAccounts({ store, clock, linkTtlMs: c.set_password_link_hours * 3_600_000 });
  const sessions = createAgentSessions({
    store,
    clock,
    policy: { idleMs: c.session_idle_minutes * 60_000, maxMs: c.session_max_hours * 3_600_000 },
    csrfKey: secret,
  });
  const limits = createAgentLimits({ perAccountPerMinute: c.sign_in_per_account_per_minute, perIpPerMinute: c.sign_in_per_ip_per_minute, clock });
  return {
    accounts,
    sessions,
    principalHook: requirePrincipal({ secret, sessions }),
    routes: { store, clock, accounts, sessions, limits, secret },
    plugin: agentRoutesPlugin,
  };
}
