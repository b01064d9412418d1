// Where log lines go: readable colour lines (pino-pretty) when stdout is a terminal, JSON lines otherwise (files,
// pipes, containers, log shippers). LOG_FORMAT=json or LOG_FORMAT=pretty overrides the guess.
import type { DestinationStream } from 'pino';

export type LogFormat = 'json' | 'pretty';

export function chooseLogFormat(isTty: boolean, env: NodeJS.ProcessEnv): LogFormat {
  if (env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty') return env.LOG_FORMAT;
  return isTty ? 'pretty' : 'json';
}

/**
 * undefined = pino's own JSON destination (stdout). `output`: where pretty lines go (default stdout).
 * pino-pretty is loaded only when used: production (JSON) never pays for it.
 */
export async function logDestination(format: LogFormat, output?: NodeJS.WritableStream): Promise<DestinationStream | undefined> {
  if (format === 'json') return undefined;
  const { default: pretty } = await import('pino-pretty');
  return pretty({ colorize: !output, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', sync: true, destination: output });
}
