// One actor per customer conversation (customer × channel): the module the runtime imports. The machine and its
// parts are in machines/conversation/ (machine.ts has the state diagram); this file names what other code uses.
export { conversationMachine } from './conversation/machine.ts';
export { abandonedTurnOutputs, APOLOGY_LLM_FAILED, APOLOGY_TOO_MANY_STEPS, GATHER_CAP, gatherDue, isKnownMessage, replyIdFor } from './conversation/turn.ts';
export { DECLINED_CONTENT, EXPIRED_CONTENT, toolContent, UNREADABLE_RESULT } from './conversation/tool-results.ts';
export type {
  AgentAuthor,
  Channel,
  ConversationContext,
  ConversationEvent,
  ConversationInput,
  ConversationOutput,
  HumanMode,
  InvokeOutcome,
  InvokeToolInput,
  LlmStepInput,
  LlmStepOutput,
  ReplySource,
  ResolvedBy,
  Timed,
  ToolCall,
  Turn,
  TurnEntry,
} from './conversation/types.ts';
