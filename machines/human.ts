// Pure: the timers of a conversation a person has (`withHuman` in conversation.ts), issue 35.
//
//   offline — no agent has written `offlineAfterMs` after the handoff: the customer is asked (once) for an email
//             address and told the team will reply there or here. The conversation stays with the team.
//   return  — only when an operator sets `returnAfterMs`: after that long without an agent message (from the
//             handoff when none wrote yet), the assistant has the conversation back and the customer is told.
//
// Without `returnAfterMs` nothing hands a conversation back but an agent's release. Both deadlines are computed from
// times kept in the snapshot (`since`, `lastAgentAt`, `offlineAsked`), so a restored actor re-arms them with the time
// left; the owner node's actor is the only one that acts (cluster ownership).

/** The longest a timer is armed for; when it fires with nothing due the state re-arms (`humanDue` says what is due). */
export const HUMAN_TIMER_CAP_MS = 2_147_483_647;

export interface HumanAuthor {
  name: string;
  agentId?: string;
}

export interface HumanMode {
  since: number;
  source: 'model' | 'api';
  reason?: string;
  /** The signed-in agent who asked for the handoff through the API. */
  requestedBy?: string;
  /** Before issue 35: the silent idle hand-back's deadline. Ignored now (kept readable in old snapshots). */
  deadline?: number;
  /** The last agent who wrote (with their id when signed in). */
  agent?: HumanAuthor;
  /** The last agent message's time. */
  lastAgentAt?: number;
  /** The customer was told no one is free yet (at most once per handoff). */
  offlineAsked?: boolean;
}

export interface HumanTimers {
  offlineAfterMs?: number;
  returnAfterMs?: number;
}

export type HumanDue = { kind: 'offline' | 'return'; at: number };

/** The next thing due while a person has the conversation (none: nothing until an agent acts). */
export function humanDue(human: HumanMode | undefined, t: HumanTimers): HumanDue | undefined {
  if (!human) return undefined;
  const due: HumanDue[] = [];
  if (t.offlineAfterMs !== undefined && human.agent === undefined && !human.offlineAsked) due.push({ kind: 'offline', at: human.since + t.offlineAfterMs });
  if (t.returnAfterMs !== undefined) due.push({ kind: 'return', at: (human.lastAgentAt ?? human.since) + t.returnAfterMs });
  return due.sort((a, b) => a.at - b.at)[0];
}

/** How long the `withHuman` timer waits from `now` (capped; re-armed when it fires with nothing due). */
export function humanDelay(human: HumanMode | undefined, t: HumanTimers, now: number): number {
  const due = humanDue(human, t);
  return due === undefined ? HUMAN_TIMER_CAP_MS : Math.min(HUMAN_TIMER_CAP_MS, Math.max(0, due.at - now));
}

/** A new handoff at `at`. */
export function newHumanMode(at: number, source: 'model' | 'api', reason: string | undefined, requestedBy?: string): HumanMode {
  const mode: HumanMode = { since: at, source };
  if (reason !== undefined) mode.reason = reason;
  if (requestedBy !== undefined) mode.requestedBy = requestedBy;
  return mode;
}
