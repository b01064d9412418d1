// Moving a store's data to another engine: the source engine lists its records as domain records (this union), and
// the importer writes them to the target through the ordinary repositories, so any engine can be a target.
import type { ConversationOutcome } from './outcomes.ts';
import type { TelemetryEvent, TurnCallRecord } from './telemetry-records.ts';
import type {
  AgentAccount,
  AgentCredential,
  Channel,
  ConversationRecord,
  Customer,
  DeadJob,
  DeliveryRecord,
  EarlyStatus,
  InboxNote,
  InboxThread,
  Job,
  MagicLink,
  MessageRecord,
  SavedReply,
} from './model.ts';

export type StoreRecord =
  | { kind: 'customer'; value: Customer }
  | { kind: 'conversation'; value: ConversationRecord }
  /** In sequence order per conversation (the importer appends them in the order given). */
  | { kind: 'message'; value: MessageRecord }
  | { kind: 'magicLink'; value: { tokenHash: string; link: MagicLink } }
  | { kind: 'agent'; value: AgentAccount }
  | { kind: 'agentCredential'; value: { hash: string; credential: AgentCredential } }
  | { kind: 'outcome'; value: ConversationOutcome }
  /** The agent inbox (issue 35): holds and resolutions, internal notes, saved replies, read marks. */
  | { kind: 'inboxThread'; value: InboxThread }
  | { kind: 'inboxNote'; value: InboxNote }
  | { kind: 'savedReply'; value: SavedReply }
  | { kind: 'inboxRead'; value: { agentId: string; conversationId: string; at: number } }
  | { kind: 'proactiveSend'; value: { customerId: string; messageId: string; at: number; channel: Channel; dedupKey?: string } }
  /** Queued jobs in sequence order per queue. */
  | { kind: 'job'; value: { queue: string; job: Job } }
  /** A finished job whose id is kept (refused until pruned). */
  | { kind: 'keptJobId'; value: { queue: string; id: string; doneAt: number } }
  | { kind: 'deadJob'; value: { queue: string; dead: DeadJob; keepId: boolean } }
  | { kind: 'delivery'; value: DeliveryRecord }
  | { kind: 'earlyStatus'; value: { providerMessageId: string; status: EarlyStatus } }
  | { kind: 'sent'; value: { jobId: string; providerMessageId: string; at: number } }
  | { kind: 'sendAttempt'; value: { jobId: string; startedAt: number } }
  | { kind: 'handled'; value: { waMessageId: string; at: number } }
  | { kind: 'event'; value: TelemetryEvent }
  | { kind: 'turnCall'; value: TurnCallRecord };

export type StoreRecordKind = StoreRecord['kind'];

/** The value a record of one kind carries: an engine's exporter reads its rows as these. */
export type StoreRecordValue<K extends StoreRecordKind> = Extract<StoreRecord, { kind: K }>['value'];
