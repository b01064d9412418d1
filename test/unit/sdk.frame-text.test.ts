// The SDK gateway's frame parser on text that is not UTF-8 or not valid Unicode (issue 34 part 7): an `ingest`
// holding a lone surrogate is refused (it would be acknowledged and stored changed); a tool's `result` holding one
// passes as before (a cut emoji in a tool's answer must not fail the call); bytes that are not UTF-8 never pass.
import { describe, expect, it } from 'vitest';
import { parseClientFrame } from '../../src/sdk/gateway.ts';

const frame = (text: string) => Buffer.from(text, 'utf8');

describe('parseClientFrame and text', () => {
  it('an ingest with a lone surrogate is refused, naming the field; a well-formed one (with a surrogate pair) passes', () => {
    expect(parseClientFrame(frame('{"type":"ingest","id":"i1","channel":"whatsapp","from":"+15550001","text":"a \\ud83d b"}'), false)).toEqual({
      ok: false,
      message: expect.stringMatching(/^ingest frame: text: text is not valid Unicode/),
    });
    expect(parseClientFrame(frame('{"type":"ingest","id":"i2","channel":"whatsapp","from":"+15550001","text":"a \\ud83d\\ude00 b"}'), false)).toMatchObject({
      ok: true,
      frame: { text: 'a 😀 b' },
    });
  });

  it("a tool's result with a lone surrogate passes as before", () => {
    expect(parseClientFrame(frame('{"type":"result","id":"r1","ok":true,"data":{"note":"cut \\ud83d"}}'), false)).toMatchObject({ ok: true });
  });

  it('bytes that are not UTF-8 are refused, whatever the frame', () => {
    const bad = Buffer.concat([frame('{"type":"result","id":"r1","ok":true,"data":"caf'), Buffer.from([0xe9]), frame('"}')]);
    expect(parseClientFrame(bad, false)).toEqual({ ok: false, message: 'frame is not valid UTF-8 text' });
  });
});
