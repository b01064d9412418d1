import { describe, expect, it } from 'vitest';
import { createSseParser } from '../../src/llm/openai-http.ts';

function parse(pieces: string[]) {
  const events: [string | undefined, string][] = [];
  const p = createSseParser((event, data) => events.push([event, data]));
  for (const piece of pieces) p.push(piece);
  p.end();
  return events;
}

describe('server-sent events', () => {
  it('events split anywhere across pieces, CRLF or LF, are whole', () => {
    const stream = 'data: {"a":1}\r\n\r\ndata: {"b":2}\n\nevent: error\ndata: {"error":{}}\n\ndata: [DONE]\n\n';
    const whole = parse([stream]);
    expect(whole).toEqual([
      [undefined, '{"a":1}'],
      [undefined, '{"b":2}'],
      ['error', '{"error":{}}'],
      [undefined, '[DONE]'],
    ]);
    for (let cut = 1; cut < stream.length; cut++) expect(parse([stream.slice(0, cut), stream.slice(cut)])).toEqual(whole);
    expect(parse(stream.split(''))).toEqual(whole);
  });

  it('several data lines join with newlines; comments and other fields are skipped; a last event without its blank line counts', () => {
    expect(parse([': keep-alive\nid: 7\nretry: 10\ndata: one\ndata:two\n\ndata: last'])).toEqual([
      [undefined, 'one\ntwo'],
      [undefined, 'last'],
    ]);
  });
});
