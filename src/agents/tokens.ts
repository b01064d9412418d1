// The secrets agents hold: 32 random bytes (base64url) with a prefix that says what they are, stored only as their
// SHA-256 (hex). `pk_` personal API keys, `ps_` sessions, `pl_` set-password links (CSRF tokens, `pc_`: sessions.ts).
import { createHash, randomBytes } from 'node:crypto';

export type TokenPrefix = 'pk_' | 'ps_' | 'pl_';

export const newToken = (prefix: TokenPrefix): string => prefix + randomBytes(32).toString('base64url');

export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A short public id (API keys are listed and revoked by it). */
export const newId = (prefix: string): string => prefix + randomBytes(9).toString('base64url');
