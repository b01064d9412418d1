// The one decision for text Parley keeps although it holds NUL (src/http/storable-text.ts): U+0000 becomes U+FFFD,
// in plain text, in JSON text that spells it, and in a JSON value at any depth (keys too); nothing else changes.
import { describe, expect, it } from 'vitest';
import { jsonHoldsNul, storableJson, storableJsonText, storableText } from '../../src/http/storable-text.ts';

describe('storable text', () => {
  it('replaces every NUL in text with U+FFFD, and returns text without one as it is', () => {
    expect(storableText('a\u0000b\u0000')).toBe('a\uFFFDb\uFFFD');
    const plain = 'no nul here \\u0000 (spelled, not held)';
    expect(storableText(plain)).toBe(plain);
  });

  it('finds and replaces the \\u0000 escapes of JSON text, never an escaped backslash followed by "u0000"', () => {
    const cases: [string, boolean, string][] = [
      ['"a\\u0000b"', true, '"a\\ufffdb"'],
      ['"a\\\\u0000b"', false, '"a\\\\u0000b"'], // a backslash, then the letters u0000
      ['"a\\\\\\u0000b"', true, '"a\\\\\\ufffdb"'], // a backslash, then a NUL
      ['{"\\u0000":1}', true, '{"\\ufffd":1}'],
      ['"\\u00000"', true, '"\\ufffd0"'],
    ];
    for (const [json, holds, storable] of cases) {
      expect(jsonHoldsNul(json), json).toBe(holds);
      expect(storableJsonText(json), json).toBe(storable);
      expect(JSON.parse(storableJsonText(json))).toEqual(storableJson(JSON.parse(json)));
    }
    // Twice in a row: a global regex's lastIndex must not make the second answer differ.
    expect(jsonHoldsNul('"\\u0000"')).toBe(true);
    expect(jsonHoldsNul('"\\u0000"')).toBe(true);
  });

  it('replaces NUL in a JSON value at any depth, keys included, and returns a value without one as it is', () => {
    expect(storableJson({ a: ['x\u0000', { 'k\u0000': 'v' }], n: 1, b: null })).toEqual({ a: ['x\uFFFD', { 'k\uFFFD': 'v' }], n: 1, b: null });
    const clean = { a: [1, 'two', { three: true }] };
    expect(storableJson(clean)).toBe(clean);
    expect(storableJson('\u0000')).toBe('\uFFFD');
    expect(storableJson(42)).toBe(42);
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 1000; i++) deep = [deep];
    expect(JSON.stringify(storableJson(deep))).toContain('bottom\uFFFD');
  });
});
