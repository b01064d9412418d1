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

  describe('pieces that arrive in the same turn of the event loop', () => {
    it('the first goes out at once, the rest as one delta when the turn ends', () => {
      const turns = manualTurns();
      const { sent, stream } = collect(turns.defer);
      ['Order', ' 1001', ' has', ' shipped.'].forEach(stream.append);
      expect(sent).toEqual([{ id: 't:r', text: 'Order' }]);
      turns.endTurn();
      expect(sent).toEqual([
        { id: 't:r', text: 'Order' },
        { id: 't:r', text: ' 1001 has shipped.' },
      ]);
      // the burst is over: nothing arrives in the next turn, so the one after starts at once again
      turns.endTurn();
      expect(turns.pending()).toBe(0);
      stream.append(' Thanks');
      expect(sent.at(-1)).toEqual({ id: 't:r', text: ' Thanks' });
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
      turns.endTurn();
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

    it('takeBack drops what waits: it was never shown, and only a reset for what was', () => {
      const turns = manualTurns();
      const { sent, stream } = collect(turns.defer);
      ['First', ' try', ' failed'].forEach(stream.append);
      stream.takeBack();
      ['  Second', ' try.'].forEach(stream.append);
      turns.endTurn();
      expect(sent).toEqual([
        { id: 't:r', text: 'First' },
        { id: 't:r', text: '', reset: true },
        { id: 't:r', text: 'Second try.' },
      ]);
      expect(shown(sent)).toBe('Second try.');
    });
  });
});
