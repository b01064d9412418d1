// Pure: the outputs of a handoff (a person takes the conversation, and gives it back) and the agent's author.
import type { HumanMode } from '../human.ts';
import type { AgentAuthor, ConversationOutput, ResolvedBy } from './types.ts';

/** The last agent message ids kept in the snapshot (a retried agent message is shown once). */
export const AGENT_IDS = 32;

/** The author as outputs carry it: the name, and the agent's id when there is one. */
export const authorOf = (a: AgentAuthor): AgentAuthor => (a.agentId === undefined ? { name: a.name } : { name: a.name, agentId: a.agentId });

export function withReason<T extends object>(o: T, reason: string | undefined): T & { reason?: string } {
  return reason === undefined ? o : Object.assign({}, o, { reason });
}

export function requestedOutput(human: HumanMode): ConversationOutput {
  const o = withReason({ type: 'handoff', id: `h:${human.since}`, phase: 'requested', source: 'api' } as const, human.reason);
  return human.requestedBy === undefined ? o : Object.assign(o, { agentId: human.requestedBy });
}

/** `resolvedBy`: the release is an agent's resolve. */
export function releasedOutput(human: HumanMode, by: 'agent' | 'idle', agentId: string | undefined, at: number, resolvedBy?: ResolvedBy): ConversationOutput {
  const o: Extract<ConversationOutput, { phase: 'released' }> = { type: 'handoff', id: `r:${human.since}`, phase: 'released', by };
  if (agentId !== undefined) o.agentId = agentId;
  if (human.agent?.agentId !== undefined) o.lastAgentId = human.agent.agentId;
  o.durationMs = Math.max(0, at - human.since);
  if (resolvedBy) o.resolvedBy = resolvedOf(resolvedBy);
  return o;
}

/** Who resolved it, as outputs carry it (only the two fields). */
export const resolvedOf = (r: ResolvedBy): ResolvedBy => ({ agentId: r.agentId, name: r.name });
