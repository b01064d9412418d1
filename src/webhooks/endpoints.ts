// Each webhook endpoint's own delivery resources (issue 34, part 1), so one endpoint that hangs, trickles, is slow or
// fails never delays another: its own connection pool (at most `concurrency` sockets, with the address policy in its
// `lookup`), its own count of deliveries in flight (at most `concurrency`; the queue's claims pass over its jobs
// while it is full) and its own circuit (circuit.ts).
import { createHash } from 'node:crypto';
import { Agent } from 'undici';
import type { Clock } from '../clock.ts';
import { guardedLookup, privateRanges } from '../config/address-policy.ts';
import { admission, afterAttempt, closedCircuit, probing, type Admission, type Circuit } from './circuit.ts';

export interface EndpointConfig {
  url: string;
  secret: string;
  events?: string[];
}

/** A short stable id of an endpoint's URL: its jobs' ids and keys carry it. */
export const endpointKey = (url: string) => createHash('sha256').update(url).digest('hex').slice(0, 16);
/** Every job of an endpoint has a key starting with this. */
export const keyPrefix = (url: string) => `${endpointKey(url)}/`;

export interface Endpoint {
  config: EndpointConfig;
  /** The URL requests go to: the configured one without its user info, which goes in `authorization` (Basic). */
  target: string;
  headers: Record<string, string>;
  prefix: string;
  agent: Agent;
  inFlight: number;
  circuit: Circuit;
}

/** What the handler gets for a delivery: go ahead (`release` after the answer), fail at once, or wait for room. */
export type Gate = { go: true; probe: boolean } | { go: false; why: 'circuit_open' | 'busy' };

export interface Endpoints {
  get(url: string): Endpoint | undefined;
  /** Key prefixes of the endpoints that can take no delivery now (full, or a probe out). */
  busyPrefixes(): string[];
  enter(e: Endpoint): Gate;
  /** The attempt's answer is known: frees its place and moves the circuit. */
  leave(e: Endpoint, ok: boolean, probe: boolean): void;
  list(): Endpoint[];
  close(): Promise<void>;
}

/** `user:password@` in a URL becomes HTTP Basic authentication (undici would drop it silently). */
export function requestTarget(url: string): { target: string; headers: Record<string, string> } {
  const u = new URL(url);
  if (!u.username && !u.password) return { target: url, headers: {} };
  const credentials = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = '';
  u.password = '';
  return { target: u.href, headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } };
}

export function createEndpoints(o: { endpoints: EndpointConfig[]; concurrency: number; allowPrivate: boolean; clock: Clock; firstOpenMs: number }): Endpoints {
  const ranges = privateRanges();
  const byUrl = new Map<string, Endpoint>();
  for (const config of o.endpoints) {
    const agent = new Agent({ connections: o.concurrency, connect: o.allowPrivate ? {} : { lookup: guardedLookup(ranges) } });
    byUrl.set(config.url, Object.assign(requestTarget(config.url), { config, prefix: keyPrefix(config.url), agent, inFlight: 0, circuit: closedCircuit() }));
  }
  const full = (e: Endpoint) => e.inFlight >= o.concurrency || e.circuit.state === 'half-open';
  return {
    get: (url) => byUrl.get(url),
    busyPrefixes: () => [...byUrl.values()].filter(full).map((e) => e.prefix),
    enter(e) {
      const now = o.clock.now();
      const may: Admission = admission(e.circuit, now);
      if (may === 'refuse') return { go: false, why: 'circuit_open' };
      if (may === 'wait' || e.inFlight >= o.concurrency) return { go: false, why: 'busy' };
      e.inFlight++;
      if (may === 'probe') e.circuit = probing(e.circuit);
      return { go: true, probe: may === 'probe' };
    },
    leave(e, ok, probe) {
      e.inFlight = Math.max(0, e.inFlight - 1);
      // A late answer of an attempt begun before a probe does not decide the probe's outcome (a success still closes).
      if (e.circuit.state === 'half-open' && !probe && !ok) return;
      e.circuit = afterAttempt(e.circuit, ok, o.clock.now(), o.firstOpenMs);
    },
    list: () => [...byUrl.values()],
    async close() {
      await Promise.all([...byUrl.values()].map((e) => e.agent.destroy().catch(() => undefined)));
    },
  };
}
