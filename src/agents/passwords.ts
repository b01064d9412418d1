// Password hashing: Node's scrypt (memory-hard), N=2^15, r=8, p=1, a 16-byte random salt, a 32-byte key. The
// parameters are stored with the hash (`scrypt$N$r$p$salt$key`, base64url), so they can be raised later: an old
// hash still verifies with its own, and `needsRehash` says when to store a new one.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export const DEFAULT_PARAMS: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
/** Passwords shorter than this are refused when set. */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

const derive = (password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    // 128·N·r bytes of memory, with room to spare.
    const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r };
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
  });

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_PARAMS): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function parse(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return undefined;
  return { params: { N, r, p }, salt: Buffer.from(parts[4], 'base64url'), key: Buffer.from(parts[5], 'base64url') };
}

/** Whether `password` matches `stored`, compared in constant time; a malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const h = parse(stored);
  if (!h || h.key.length !== KEY_BYTES) return false;
  const key = await derive(password, h.salt, h.params);
  return timingSafeEqual(key, h.key);
}

/** True when `stored` was made with weaker parameters than `params` (hash again at the next sign-in). */
export function needsRehash(stored: string, params: ScryptParams = DEFAULT_PARAMS): boolean {
  const h = parse(stored);
  return !h || h.params.N < params.N || h.params.r < params.r || h.params.p < params.p;
}

/**
 * A hash of a random password, computed once per process: signing in to an unknown or password-less account
 * still costs one scrypt, so the response time does not say whether the email exists.
 */
export function createDummyHash(): () => Promise<string> {
  let dummy: Promise<string> | undefined;
  return () => (dummy ??= hashPassword(randomBytes(16).toString('base64url')));
}
