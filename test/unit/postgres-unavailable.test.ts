// Which PostgreSQL failures are "the database cannot serve us now" (a StoreUnavailableError: try again later) and
// which are a wrong statement (passed through as they are).
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { asStoreError, unavailability } from '../../src/store/postgres/unavailable.ts';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('postgres unavailability', () => {
  it.each([
    ['57014', 'timeout', 'statement_timeout'],
    ['55P03', 'timeout', 'lock_timeout'],
    ['25P03', 'timeout', 'idle_in_transaction_timeout'],
    ['57P01', 'shutdown', '57P01'],
    ['08006', 'unreachable', '08006'],
    ['53100', 'disk_full', '53100'],
  ])('SQLSTATE %s is unavailable (%s: %s)', (state, code, cause) => {
    expect(unavailability(pgError(state))).toEqual({ code, cause });
    expect(asStoreError(pgError(state))).toBeInstanceOf(StoreUnavailableError);
  });

  it('a connection that ended between statements is unavailable; a wrong statement is not', () => {
    expect(unavailability(new Error('Connection terminated unexpectedly'))).toEqual({ code: 'unreachable', cause: 'connection_lost' });
    expect(unavailability(pgError('ECONNRESET'))).toEqual({ code: 'unreachable', cause: 'ECONNRESET' });
    const syntax = pgError('42601', 'syntax error at or near "SELEC"');
    expect(unavailability(syntax)).toBeUndefined();
    expect(asStoreError(syntax)).toBe(syntax);
  });
});
