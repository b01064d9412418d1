// The telemetry feature's names for what it records: the records are the store's (src/store/telemetry-records.ts),
// the recorder's interface is a service every layer may use (src/services.ts).
export type { TelemetryEvent, TurnCallRecord } from '../store/telemetry-records.ts';
export type { NewEvent, NewTurnCall, Telemetry } from '../services.ts';
