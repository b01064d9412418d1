// Issue 20: what the customer is shown while a reply is written (src/conversations/reply-stream.ts).
import { describe, expect, it } from 'vitest';
import { createReplyStream, type ReplyDelta } from '../../src/conversations/reply-stream.ts';

const collect = () => {
  const sent: ReplyDelta[] = [];
  return { sent, stream: createReplyStream('t:r', (d) => sent.push(d)) };
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
});
