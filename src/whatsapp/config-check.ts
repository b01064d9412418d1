// The settings the WhatsApp channel cannot start without: checked when the channel is made, named with their env vars.
import type { Config } from '../config/schema.ts';

export type WhatsAppConfig = Config['channels']['whatsapp'];

export function checkWhatsAppConfig(services: { config: Config; testMode: boolean }): void {
  const wa = services.config.channels.whatsapp;
  if (!wa.enabled || wa.provider !== 'meta') return;
  const needed: [keyof typeof wa, string][] = [
    ['verify_token', 'WA_VERIFY_TOKEN'],
    ['app_secret', 'WA_APP_SECRET'],
    ...(services.testMode
      ? []
      : ([
          ['phone_id', 'WA_PHONE_ID'],
          ['token', 'WA_TOKEN'],
        ] as [keyof typeof wa, string][])),
  ];
  const missing = needed.filter(([k]) => !wa[k]);
  if (missing.length) {
    throw new Error(
      `channels.whatsapp: provider "meta" is enabled but ${missing.map(([k, env]) => `${k} (${env})`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set`,
    );
  }
}
