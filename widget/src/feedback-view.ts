// The customer's feedback in the log (docs/outcomes.md): "Did that answer your question?" with Yes / No under the
// assistant's latest answer, and the rating card (five scores, an optional comment) once Parley asks for one. Text
// only through textContent.
import { el, type NodeContext } from './nodes.ts';
import { offerPerson, resolutionTarget, type WidgetState } from './state.ts';
import { fill, type Strings } from './strings.ts';

export interface FeedbackHandlers {
  /** Each returns false when it could not be sent (the controls stay usable). */
  onResolve(yes: boolean): boolean;
  onRate(score: number, comment?: string): boolean;
  onPerson(): boolean;
}

export interface FeedbackView {
  /** Kept right after the last message by the view. */
  node: HTMLElement;
  render(state: WidgetState): void;
}

const MAX_COMMENT = 1000;

/**
 * The five scores as one radio group: one Tab stop (the chosen score, else the first), arrow keys (and Home/End) move
 * and choose, as a keyboard or screen-reader user expects of radio buttons.
 */
function scoreGroup(s: Strings, pick: (n: number) => void): HTMLElement {
  const group = el('div', { class: 'scores', role: 'radiogroup', 'aria-label': s.ratingTitle });
  const buttons = [1, 2, 3, 4, 5].map((n) =>
    el(
      'button',
      { type: 'button', class: 'score', role: 'radio', 'aria-checked': 'false', 'aria-label': fill(s.ratingScore, { n }), 'data-score': String(n) },
      String(n),
    ),
  );
  const choose = (i: number, focus: boolean) => {
    buttons.forEach((b, j) => {
      b.setAttribute('aria-checked', String(i === j));
      b.tabIndex = i === j ? 0 : -1;
    });
    if (focus) buttons[i].focus();
    pick(i + 1);
  };
  buttons.forEach((b, i) => {
    b.tabIndex = i === 0 ? 0 : -1;
    b.addEventListener('click', () => choose(i, false));
    b.addEventListener('keydown', (e) => {
      // Right to left, the next score is on the left.
      const step = getComputedStyle(group).direction === 'rtl' ? -1 : 1;
      const to = { ArrowRight: i + step, ArrowDown: i + 1, ArrowLeft: i - step, ArrowUp: i - 1, Home: 0, End: 4 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      choose((to + 5) % 5, true);
    });
  });
  group.append(...buttons);
  return group;
}

export function createFeedbackView(c: NodeContext, h: FeedbackHandlers): FeedbackView {
  const s = c.strings;
  const node = el('div', { class: 'feedback-area', 'data-testid': 'feedback' });

  const question = el('div', { class: 'resolution', role: 'group', 'aria-label': s.feedbackQuestion, 'data-testid': 'resolution', hidden: '' });
  const yes = el('button', { type: 'button', class: 'chip', 'data-testid': 'resolution-yes' }, s.feedbackYes);
  const no = el('button', { type: 'button', class: 'chip', 'data-testid': 'resolution-no' }, s.feedbackNo);
  yes.addEventListener('click', () => h.onResolve(true));
  no.addEventListener('click', () => h.onResolve(false));
  // Yes and No stay together: on a narrow phone the question wraps above them, never one chip alone on a line.
  const chips = el('span', { class: 'chips' });
  chips.append(yes, no);
  question.append(el('span', { class: 'ask' }, s.feedbackQuestion), chips);
  const thanks = el('p', { class: 'feedback-thanks', role: 'status', 'data-testid': 'resolution-thanks', hidden: '' }, s.feedbackThanks);
  // After a "No": the next step, a person (only where handoff is on).
  const person = el('button', { type: 'button', class: 'chip person', 'data-testid': 'talk-to-person', hidden: '' }, s.talkToPerson);
  person.addEventListener('click', () => h.onPerson());

  const card = el('form', { class: 'rating', 'aria-label': s.ratingTitle, 'data-testid': 'rating', hidden: '' });
  let chosen = 0;
  const scores = scoreGroup(s, (n) => {
    chosen = n;
    send.disabled = false;
  });
  const commentId = 'pw-rating-comment';
  const label = el('label', { for: commentId, class: 'comment-label' }, s.ratingComment);
  const comment = el('textarea', { id: commentId, class: 'comment', dir: 'auto', rows: '2', maxlength: String(MAX_COMMENT), 'data-testid': 'rating-comment' });
  const send = el('button', { type: 'submit', class: 'rate-send', 'data-testid': 'rating-send' }, s.ratingSend);
  send.disabled = true;
  card.append(el('p', { class: 'kicker' }, s.ratingTitle), scores, label, comment, send);
  card.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!chosen) return;
    const text = comment.value.trim();
    h.onRate(chosen, text ? text : undefined);
  });
  const rated = el('p', { class: 'feedback-thanks', role: 'status', 'data-testid': 'rating-thanks', hidden: '' }, s.ratingThanks);

  node.append(question, thanks, person, card, rated);
  return {
    node,
    render(state) {
      const target = resolutionTarget(state);
      const answered = target !== undefined && state.feedback?.answeredFor === target;
      question.hidden = target === undefined || answered;
      thanks.hidden = !answered;
      person.hidden = !offerPerson(state);
      card.hidden = state.feedback?.rating !== 'asked';
      rated.hidden = state.feedback?.rating !== 'sent' || state.bubbles[state.bubbles.length - 1]?.id !== state.feedback.ratedAfter;
    },
  };
}
