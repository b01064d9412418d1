/** E.164 (`+15550003333`) from WhatsApp's `wa_id` (digits) or typed input; null when it can't be a number. */
export function normalizePhone(input: string): string | null {
  if (typeof input !== 'string') return null;
  const trimmed = input.trim();
  if (!/^[+\d\s().-]+$/.test(trimmed)) return null;
  let digits = trimmed.replace(/[^\d]/g, '');
  if (trimmed.startsWith('00')) digits = digits.slice(2);
  if (digits.length < 8 || digits.length > 15 || digits.startsWith('0')) return null;
  return `+${digits}`;
}

/** Graph API recipients are digits without the plus. */
export const toWaId = (e164: string) => e164.replace(/^\+/, '');
