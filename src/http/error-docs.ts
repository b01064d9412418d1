// The error catalogue as the Markdown page docs/errors.md (written by scripts/error-docs.ts; a test keeps it current).
import { HTTP_ERRORS, SDK_FRAME_ERRORS, WIDGET_FRAME_ERRORS } from '../../sdk/src/error-codes.ts';

const row = (cells: string[]) => `| ${cells.join(' | ')} |`;

export function errorCatalogueMarkdown(): string {
  const http = Object.entries(HTTP_ERRORS).map(([code, e]) => row([`\`${code}\``, String(e.status), e.message]));
  const widget = Object.entries(WIDGET_FRAME_ERRORS).map(([code, m]) => row([`\`${code}\``, m]));
  const sdk = Object.entries(SDK_FRAME_ERRORS).map(([code, m]) => row([`\`${code}\``, m]));
  return [
    '# Error codes',
    '',
    'Every error Parley answers with, from one catalogue (`sdk/src/error-codes.ts`): switch on the `code`, show the',
    '`message`. Regenerate this page with `npx tsx scripts/error-docs.ts`.',
    '',
    '## HTTP API',
    '',
    'The body is `{ "error": { "code": "…", "message": "…" } }` with the status below; some add fields (`retryAfterMs`',
    'on `rate_limited`). The message below is the default: most answers say more.',
    '',
    row(['Code', 'Status', 'Meaning']),
    row(['---', '---', '---']),
    ...http,
    '',
    '## Widget socket (`/widget/ws`)',
    '',
    "`{ type: 'error', code, message, id?, retryAfterMs? }`: `id` names the customer message refused (not stored: send",
    'it again with the same id).',
    '',
    row(['Code', 'Meaning']),
    row(['---', '---']),
    ...widget,
    '',
    '## SDK socket (`/sdk`)',
    '',
    row(['Code', 'Meaning']),
    row(['---', '---']),
    ...sdk,
    '',
  ].join('\n');
}
