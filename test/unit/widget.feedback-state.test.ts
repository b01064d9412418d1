// The widget's feedback state (docs/outcomes.md): "Did that answer your question?" belongs to the assistant's latest
// answer (not while a person answers, a reply is written or a confirmation waits); the rating is asked by `rate` or by
// `ready`, and once sent it stays sent across a reconnect.
import { describe, expect, it } from 'vitest';
import { initialState, offerPerson, reduce, resolutionTarget, type WidgetState } from '../../widget/src/state.ts';

const ready = (s: WidgetState, feedback?: { resolution: boolean; rating: boolean; handoff?: boolean }) =>
  reduce(s, {
    type: 'frame',
    frame: Object.assign(
      { type: 'ready' as const, customerId: 'c', conversationId: 'x', history: [{ id: 'a1', role: 'assistant' as const, text: 'Order 1 shipped.', at: 1 }] },
      feedback ? { feedback } : {},
    ),
  });

describe('widget feedback state', () => {
  it('asks about the latest answer only, and remembers the answer for it', () => {
    expect(resolutionTarget(ready(initialState))).toBeUndefined(); // an older server: no feedback offered
    let s = ready(initialState, { resolution: true, rating: false });
    expect(resolutionTarget(s)).toBe('a1');
    s = reduce(s, { type: 'resolved', id: 'a1', yes: true });
    expect(s.feedback).toMatchObject({ resolution: true, answeredFor: 'a1' });
    s = reduce(s, { type: 'sent', id: 'u2', text: 'and order 2?', at: 2 });
    expect(resolutionTarget(s)).toBeUndefined(); // the customer has the last word
    s = reduce(s, { type: 'frame', frame: { type: 'message', id: 'a2', role: 'assistant', text: 'Shipped too.', at: 3 } });
    expect(resolutionTarget(s)).toBe('a2');
    s = reduce(s, { type: 'frame', frame: { type: 'status', mode: 'human', at: 4 } });
    expect(resolutionTarget(s)).toBeUndefined(); // a person answers now
  });

  it('does not ask after an apology or an "I don\'t know" (`unanswered`), live or from the history', () => {
    let s = ready(initialState, { resolution: true, rating: false });
    s = reduce(s, { type: 'sent', id: 'u2', text: 'capital of France?', at: 2 });
    s = reduce(s, { type: 'frame', frame: { type: 'message', id: 'a2', role: 'assistant', text: "I'm sorry, I don't know.", at: 3, unanswered: true } });
    expect(resolutionTarget(s)).toBeUndefined();
    const reloaded = reduce(initialState, {
      type: 'frame',
      frame: {
        type: 'ready',
        customerId: 'c',
        conversationId: 'x',
        history: [{ id: 'a2', role: 'assistant', text: "I'm sorry, I don't know.", at: 3, unanswered: true }],
        feedback: { resolution: true, rating: false },
      },
    });
    expect(resolutionTarget(reloaded)).toBeUndefined();
  });

  it('the rating: asked by `rate` or `ready`, sent once, not asked again after a reconnect', () => {
    let s = ready(initialState, { resolution: true, rating: false });
    expect(s.feedback?.rating).toBeUndefined();
    s = reduce(s, { type: 'frame', frame: { type: 'rate' } });
    expect(s.feedback?.rating).toBe('asked');
    s = reduce(s, { type: 'rated' });
    expect(s.feedback?.rating).toBe('sent');
    s = reduce(s, { type: 'frame', frame: { type: 'rate' } });
    expect(s.feedback?.rating).toBe('sent');
    expect(ready(s, { resolution: true, rating: true }).feedback?.rating).toBe('sent');
    expect(ready(initialState, { resolution: false, rating: true }).feedback).toEqual({ resolution: false, rating: 'asked' });
  });

  it('"Talk to a person" after a No only, where handoff is on, until asked (across a reconnect) or a person has it', () => {
    const no = (s: WidgetState) => reduce(s, { type: 'resolved', id: 'a1', yes: false });
    expect(offerPerson(no(ready(initialState, { resolution: true, rating: false })))).toBe(false); // handoff off
    const on = ready(initialState, { resolution: true, rating: false, handoff: true });
    expect(offerPerson(on)).toBe(false); // not answered yet
    expect(offerPerson(reduce(on, { type: 'resolved', id: 'a1', yes: true }))).toBe(false);
    let s = no(on);
    expect(offerPerson(s)).toBe(true);
    expect(offerPerson(ready(s, { resolution: true, rating: false, handoff: true }))).toBe(true); // a reconnect keeps the No
    s = reduce(s, { type: 'personAsked' });
    expect(offerPerson(s)).toBe(false);
    expect(offerPerson(ready(s, { resolution: true, rating: false, handoff: true }))).toBe(false);
    expect(offerPerson(reduce(no(on), { type: 'frame', frame: { type: 'status', mode: 'human', at: 4 } }))).toBe(false);
  });
});
