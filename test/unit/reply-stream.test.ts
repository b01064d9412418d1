// Issue 20: what the customer is shown while a reply is written (src/conversations/reply-stream.ts).
import { describe, expect, it } from 'vitest';
import { createReplyStream, type Defer, type ReplyDelta } from '../../src/conversations/reply-stream.ts';

/** Each piece in a turn of the event loop of its own (the turn ends as soon as it is asked to), unless `defer` says otherwise. */
const collect = (defer: Defer = (fn) => fn()) => {
  const sent: ReplyDelta[] = [];
  return { sent, stream: createReplyStream('t:r', (d) => sent.push(d), defer) };
};
/** A turn of the event loop that ends when the test says so. */
const manualTurns = () => {
  const queued: (() => void)[] = [];
  return {
    defer: ((fn) => void queued.push(fn)) as Defer,
    endTurn: () => queued.splice(0).forEach((fn) => fn()),
    pending: () => queued.length,
  };
};
/** What a widget shows after these deltas. */
const shown = (sent: ReplyDelta[]) => sent.reduce((text, d) => (d.reset ? '' : text) + d.text, '');

describe('reply stream', () => {
  it('passes each piece on under the reply id; joined, the deltas are the trimmed text', () => {
    const { sent, stream } = collect();
    const pieces = ['\n\n  ', 'Order', ' 1001', ' ', ' has', '  shipped.', '\n', '  '];
    pieces.forEach(stream.append);
    expect(sent.every((d) => d.id === 't:r' && !d.reset)).toBe(true);
    expect(sent.map((d) => d.text)).toEqual(['Order', ' 1001', '  has', '  shipped.']);
    expect(shown(sent)).toBe(pieces.join('').trim());
  });

  it('whitespace-only pieces send nothing until text follows', () => {
    const { sent, stream } = collect();
    stream.append('  ');
    stream.append('\n');
    expect(sent).toEqual([]);
    stream.append('Hi');
    stream.append(' ');
    expect(sent).toEqual([{ id: 't:r', text: 'Hi' }]);
  });

  it('takeBack after text was shown sends one reset; the next attempt writes from the start', () => {
    const { sent, stream } = collect();
    stream.append('First try');
    stream.append(' and ');
    stream.takeBack();
    stream.takeBack();
    expect(sent).toEqual([
      { id: 't:r', text: 'First try' },
      { id: 't:r', text: ' and' },
      { id: 't:r', text: '', reset: true },
    ]);
    stream.append('  Second');
    stream.append(' try.');
    expect(shown(sent)).toBe('Second try.');
    expect(sent.at(-2)).toEqual({ id: 't:r', text: 'Second' });
  });

  it('takeBack with nothing shown sends nothing', () => {
    const { sent, stream } = collect();
    stream.append('   ');
    stream.takeBack();
    expect(sent).toEqual([]);
  });

  describe('pieces after the first words wait for the end of the turn of the event loop', () => {
    it('the first words go out at once, the pieces that follow in that turn as one delta when it ends', () => {
      const turns = manualTurns();
      const { sent, stream } = collect(turns.defer);
      ['Order', ' 1001', ' has', ' shipped.'].forEach(stream.append);
      expect(sent).toEqual([{ id: 't:r', text: 'Order' }]);
      turns.endTurn();
      expect(sent).toEqual([
        { id: 't:r', text: 'Order' },
        { id: 't:r', text: ' 1001 has shipped.' },
      ]);
      // one end of turn asked for per turn, and none while nothing waits
      expect(turns.pending()).toBe(0);
      stream.append(' Thanks');
      stream.append(' again');
      expect(turns.pending()).toBe(1);
      expect(sent).toHaveLength(2);
      turns.endTurn();
      expect(sent.at(-1)).toEqual({ id: 't:r', text: ' Thanks again' });
    });

    it("another reply's first words, read later in the same turn, go out before this reply's later pieces", () => {
      const turns = manualTurns();
      const log: ReplyDelta[] = [];
      const a = createReplyStream('a:r', (d) => log.push(d), turns.defer);
      const b = createReplyStream('b:r', (d) => log.push(d), turns.defer);
      a.append('Your order');
      turns.endTurn();
      // one turn of the event loop reads a chunk for each reply: a's continues, b's begins
      a.append(' has shipped.');
      b.append('Hello');
      turns.endTurn();
      expect(log).toEqual([
        { id: 'a:r', text: 'Your order' },
        { id: 'b:r', text: 'Hello' },
        { id: 'a:r', text: ' has shipped.' },
      ]);
    });

    it('a burst over several turns: one delta per turn, and the text joined is still the trimmed reply', () => {
      const turns = manualTurns();
      const { sent, stream } = collect(turns.defer);
      const pieces = [
        ['  Your', ' refund'],
        [' of', ' 12', ' EUR'],
        [' is', ' on', ' its', ' way.', '\n'],
      ];
      for (const turn of pieces) {
        turn.forEach(stream.append);
        turns.endTurn();
      }
      expect(sent.map((d) => d.text)).toEqual(['Your', ' refund', ' of 12 EUR', ' is on its way.']);
      expect(shown(sent)).toBe(pieces.flat().join('').trim());
    });

    it('flush sends what waits at once (the reply is final before the turn ends); the turn then ends quietly', () => {
      const turns = manualTurns();
      const { sent, stream } = collect(turns.defer);
      ['Hello', ' there', ' friend', '  '].forEach(stream.append);
      stream.flush();
      expect(sent.map((d) => d.text)).toEqual(['Hello', ' there friend']);
      stream.flush();
      turns.endTurn();
      expect(sent).toHaveLength(2);
    });

    it('takeBack drops what waits (it was never shown); the next attempt writes its first words at once', () => {
      const turns = manualTurns();
      const { sent, stream } = collect(turns.defer);
      ['First', ' try', ' failed'].forEach(stream.append);
      stream.takeBack();
      ['  Second', ' try.'].forEach(stream.append);
      expect(sent).toEqual([
        { id: 't:r', text: 'First' },
        { id: 't:r', text: '', reset: true },
        { id: 't:r', text: 'Second' },
      ]);
      turns.endTurn();
      expect(sent.at(-1)).toEqual({ id: 't:r', text: ' try.' });
      expect(shown(sent)).toBe('Second try.');
    });
  });
});
