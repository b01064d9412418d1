// Styles live inside the shadow root, on an inner wrapper; `:host` rules are
// !important so a host page's `* { … !important }` cannot reach in.
// Colours are custom properties: the theme sets the accent, `data-scheme` picks light or dark.

const DARK = `--pw-bg: #111827; --pw-fg: #e5e7eb; --pw-muted: #9ca3af; --pw-log: #0b1120; --pw-bubble: #1f2937; --pw-border: #374151;
  --pw-input: #1f2937; --pw-notice-bg: #3a2e0c; --pw-notice-fg: #fcd34d; --pw-error-bg: #3b1219; --pw-error-fg: #fca5a5; --pw-shadow: rgba(0,0,0,.6);
  --pw-tip-bg: #e5e7eb; --pw-tip-fg: #111827; --pw-accent-ink: var(--pw-fg); --pw-dot-on: #4ade80; --pw-dot-wait: #fbbf24; --pw-dot-off: #f87171;`;

export const STYLES = `
:host { all: initial !important; position: fixed !important; right: max(20px, env(safe-area-inset-right)) !important; left: auto !important;
  bottom: calc(20px + env(safe-area-inset-bottom)) !important; z-index: 2147483000 !important; font-size: 15px !important; }
:host([data-position=left]) { left: max(20px, env(safe-area-inset-left)) !important; right: auto !important; }
.pw { --pw-accent: #2f5bea; --pw-on-accent: #fff; --pw-bg: #fff; --pw-fg: #1c1e21; --pw-muted: #6b7280; --pw-log: #f6f7fb; --pw-bubble: #fff;
  --pw-border: #e3e6ee; --pw-input: #fff; --pw-notice-bg: #fff7e0; --pw-notice-fg: #7a5200; --pw-error-bg: #fdecee; --pw-error-fg: #b00020;
  --pw-ok: #1f9d55; --pw-bad: #d64545; --pw-shadow: rgba(15,23,42,.28); --pw-tip-bg: #111827; --pw-tip-fg: #fff;
  /* The status dot's colours, 3:1 or more on the pill (--pw-bg), light and dark (WCAG 1.4.11). */
  --pw-dot-on: #15803d; --pw-dot-wait: #b45309; --pw-dot-off: #dc2626;
  /* The accent as text and lines on the panel: the text colour where the accent does not contrast (dark panels; a light accent, see theme.ts). */
  --pw-accent-ink: var(--pw-accent);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; color: var(--pw-fg); -webkit-text-size-adjust: 100%; }
.pw[data-scheme=dark] { ${DARK} color-scheme: dark; }
@media (prefers-color-scheme: dark) { .pw[data-scheme=auto] { ${DARK} color-scheme: dark; } }
.pw * { box-sizing: border-box; }
button { font: inherit; }
.launcher { position: relative; width: 56px; height: 56px; border-radius: 50%; border: 0; background: var(--pw-accent); color: var(--pw-on-accent); cursor: pointer;
  box-shadow: 0 6px 20px var(--pw-shadow); display: grid; place-items: center; transition: transform .15s ease; }
.launcher:hover { transform: scale(1.05); }
.launcher svg { width: 26px; height: 26px; }
.launcher .ic-close, .launcher[aria-expanded=true] .ic-open { display: none; }
.launcher[aria-expanded=true] .ic-close { display: block; }
/* Two colours, so the ring stands out (3:1) on any background: amber outside (dark panels, the accent), a dark line inside
   (white cards, a light accent). */
.launcher:focus-visible, button:focus-visible, .md a:focus-visible, .cite:focus-visible, .sources a:focus-visible { outline: 3px solid #ffb400;
  outline-offset: 2px; box-shadow: 0 0 0 2px #111827; }
.launcher:focus-visible { box-shadow: 0 0 0 2px #111827, 0 6px 20px var(--pw-shadow); }
textarea:focus-visible { outline: 2px solid var(--pw-accent-ink); outline-offset: 1px; }
.badge { position: absolute; top: -4px; inset-inline-end: -4px; min-width: 20px; height: 20px; padding: 0 5px; border-radius: 10px; background: #d93025; color: #fff;
  font: 600 12px/20px system-ui, sans-serif; text-align: center; }
.badge[hidden] { display: none; }
.panel { position: absolute; right: 0; bottom: 72px; width: 370px; height: 600px; max-height: calc(100vh - 120px); background: var(--pw-bg); border-radius: 16px;
  box-shadow: 0 12px 48px var(--pw-shadow); display: flex; flex-direction: column; overflow: hidden; transform-origin: bottom right; animation: pw-pop .18s ease-out; }
.pw[data-position=left] .panel { right: auto; left: 0; transform-origin: bottom left; }
.panel[hidden] { display: none; }
@keyframes pw-pop { from { opacity: 0; transform: translateY(10px) scale(.98); } }
.head { display: flex; align-items: center; gap: 10px; padding: 14px; padding-inline: 16px 12px; background: var(--pw-accent); color: var(--pw-on-accent); }
.head-text { flex: 1; min-width: 0; }
/* Up to two lines each, so "Typically replies in minutes" is read whole beside the status pill on a 320 px phone. */
.title, .subtitle { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; overflow: hidden; overflow-wrap: anywhere; }
.title { font-weight: 650; font-size: 16px; line-height: 1.3; }
.subtitle { font-size: 12.5px; line-height: 1.3; opacity: .88; }
.subtitle:empty { display: none; }
/* The pill is drawn in the panel's own colours, not over the accent: readable (WCAG AA) whatever the brand colour. */
.status { display: inline-flex; align-items: center; gap: 5px; font-size: 12px; font-weight: 550; padding: 2px 8px; border-radius: 10px; background: var(--pw-bg); color: var(--pw-fg); white-space: nowrap; }
.dot { width: 8px; height: 8px; border-radius: 50%; background: var(--pw-dot-off); }
.dot[data-state=Connected] { background: var(--pw-dot-on); }
.dot[data-state=Reconnecting], .dot[data-state=Connecting] { background: var(--pw-dot-wait); }
.close { flex: none; width: 40px; height: 40px; border-radius: 50%; background: transparent; border: 0; color: inherit; cursor: pointer; display: grid; place-items: center; }
.close:hover { background: rgba(0,0,0,.12); }
.close svg { width: 20px; height: 20px; }
.log { flex: 1; overflow-y: auto; overscroll-behavior: contain; padding: 16px 14px 8px; display: flex; flex-direction: column; gap: 2px; background: var(--pw-log); }
.welcome { align-self: flex-start; max-width: 84%; margin: 6px 0 0; padding: 9px 13px; border-radius: 18px; border-end-start-radius: 5px;
  background: var(--pw-bubble); border: 1px solid var(--pw-border); }
.welcome[hidden] { display: none; }
.row { display: flex; flex-direction: column; max-width: 84%; margin-top: 6px; }
.row[data-role=user] { align-self: flex-end; align-items: flex-end; }
.row[data-role=assistant] { align-self: flex-start; align-items: flex-start; }
/* max-width: a reply's code block or long link never widens its bubble past the log (it wraps inside it). */
.msg { max-width: 100%; padding: 9px 13px; border-radius: 18px; white-space: pre-wrap; overflow-wrap: anywhere; }
/* A block: a message's lines line up on the side its own words start from (its dir="auto"), not the panel's. */
.msg > .text { display: block; }
.row[data-role=user] .msg { background: var(--pw-accent); color: var(--pw-on-accent); border-end-end-radius: 5px; }
.row[data-role=user][data-delivered=false] .msg { opacity: .72; }
.row[data-role=agent] { align-self: flex-start; align-items: flex-start; }
.row[data-role=agent] .author { font-size: 12px; font-weight: 600; color: var(--pw-muted); margin: 0 0 2px; margin-inline-start: 4px; }
.row[data-role=agent] .msg { background: var(--pw-bubble); border: 1px solid var(--pw-accent); border-end-start-radius: 5px; }
.status-line { align-self: center; max-width: 92%; margin: 8px 0; padding: 4px 12px; border-radius: 12px; color: var(--pw-muted); font-size: 12.5px; text-align: center; }
.row[data-role=assistant] .msg { background: var(--pw-bubble); border: 1px solid var(--pw-border); border-end-start-radius: 5px; }
.tag { display: block; font-size: 11px; font-weight: 650; color: var(--pw-accent-ink); text-transform: uppercase; letter-spacing: .05em; }
.time { position: relative; font-size: 11.5px; color: var(--pw-muted); margin: 3px 6px 0; border-radius: 4px; cursor: default; }
.time::after { content: attr(data-exact); position: absolute; top: calc(100% + 4px); inset-inline-start: 0; z-index: 2; background: var(--pw-tip-bg); color: var(--pw-tip-fg);
  padding: 5px 9px; border-radius: 6px; font-size: 12px; white-space: nowrap; pointer-events: none; opacity: 0; visibility: hidden; }
.row[data-role=user] .time::after { inset-inline: auto 0; }
.time:hover::after, .time:focus::after { opacity: 1; visibility: visible; }
.receipt, .confirm { align-self: stretch; margin: 10px 0 4px; }
.receipt { align-self: center; max-width: 92%; display: flex; flex-wrap: wrap; align-items: center; justify-content: center; gap: 2px 8px; padding: 6px 12px;
  border: 1px solid var(--pw-border); border-radius: 14px; background: var(--pw-bubble); color: var(--pw-muted); font-size: 13px; text-align: center; }
.receipt .mark { flex: none; display: inline-grid; place-items: center; width: 18px; height: 18px; border-radius: 50%; color: #fff; font-size: 11px; font-weight: 700; background: var(--pw-ok); }
.receipt[data-outcome=denied] .mark, .receipt[data-outcome=failed] .mark { background: var(--pw-bad); }
.receipt[data-outcome=expired] .mark, .receipt[data-outcome=cancelled] .mark, .receipt[data-outcome=approved] .mark { background: var(--pw-muted); }
.receipt[data-outcome=failed] { border-color: var(--pw-bad); }
.receipt .what { color: var(--pw-fg); font-weight: 550; min-width: 0; overflow-wrap: anywhere; }
.receipt .time { margin: 0; flex: none; }
/* A long receipt (a refused action's reason) wraps its words beside its mark, not under it. */
.receipt { flex-wrap: nowrap; }
.receipt .time::after { left: 50%; right: auto; transform: translateX(-50%); }
.confirm { background: var(--pw-bubble); border: 1px solid var(--pw-border); border-inline-start: 4px solid var(--pw-accent); border-radius: 12px; padding: 12px 14px;
  box-shadow: 0 2px 8px rgba(15,23,42,.06); }
.confirm .kicker { margin: 0 0 2px; font-size: 11.5px; font-weight: 650; text-transform: uppercase; letter-spacing: .05em; color: var(--pw-muted); }
.confirm .question { margin: 0 0 10px; font-weight: 600; font-size: 15.5px; overflow-wrap: anywhere; }
.confirm .actions { display: flex; gap: 8px; }
.confirm button { flex: 1; min-height: 40px; border-radius: 10px; cursor: pointer; font-weight: 600; }
.approve { border: 0; background: var(--pw-accent); color: var(--pw-on-accent); }
.decline { border: 1px solid var(--pw-border); background: transparent; color: var(--pw-fg); }
.confirm button:disabled { opacity: .5; cursor: default; }
.feedback-area { display: flex; flex-direction: column; gap: 6px; }
.feedback-area:empty, .feedback-area > [hidden] { display: none; }
.resolution { align-self: flex-start; display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 6px 0 2px; margin-inline-start: 4px; font-size: 13px; color: var(--pw-fg); }
.resolution .chips { display: flex; gap: 6px; }
.chip { min-height: 32px; min-width: 44px; padding: 4px 12px; border-radius: 16px; border: 1px solid var(--pw-border); background: var(--pw-bubble); color: var(--pw-fg); cursor: pointer; font: inherit; font-weight: 600; }
.chip.person { align-self: flex-start; margin: 2px 0 4px; margin-inline-start: 4px; }
.feedback-thanks { align-self: flex-start; margin: 6px 0 2px; margin-inline-start: 4px; font-size: 13px; color: var(--pw-fg); }
.rating { align-self: stretch; margin: 10px 0 4px; background: var(--pw-bubble); border: 1px solid var(--pw-border); border-inline-start: 4px solid var(--pw-accent);
  border-radius: 12px; padding: 12px 14px; display: flex; flex-direction: column; gap: 8px; }
.rating .kicker { margin: 0; font-weight: 600; }
.scores { display: flex; gap: 6px; }
.score { flex: 1; min-height: 40px; border-radius: 10px; border: 1px solid var(--pw-border); background: transparent; color: var(--pw-fg); font: inherit; font-weight: 650; cursor: pointer; }
.score[aria-checked=true] { background: var(--pw-accent); color: var(--pw-on-accent); border-color: var(--pw-accent); }
.comment-label { font-size: 12.5px; color: var(--pw-fg); }
/* 16 px: a phone does not zoom into it */
.comment { resize: vertical; min-height: 44px; border: 1px solid var(--pw-border); border-radius: 8px; padding: 6px 8px; background: var(--pw-input); color: var(--pw-fg); font: inherit; font-size: 16px; }
.rate-send { min-height: 40px; border: 0; border-radius: 10px; background: var(--pw-accent); color: var(--pw-on-accent); font: inherit; font-weight: 600; cursor: pointer; }
.rate-send:disabled { opacity: .5; cursor: default; }
.typing { align-self: flex-start; display: flex; gap: 4px; align-items: center; margin-top: 8px; padding: 12px 14px; background: var(--pw-bubble); border: 1px solid var(--pw-border);
  border-radius: 18px; border-end-start-radius: 5px; }
.typing[hidden] { display: none; }
.typing .who { font-size: 12px; color: var(--pw-muted); margin-inline-end: 4px; } .typing .who[hidden] { display: none; }
.typing i { width: 7px; height: 7px; border-radius: 50%; background: var(--pw-muted); animation: pw-bounce 1.2s infinite ease-in-out; }
.typing i:nth-child(2) { animation-delay: .15s; } .typing i:nth-child(3) { animation-delay: .3s; }
@keyframes pw-bounce { 0%, 60%, 100% { transform: translateY(0); opacity: .45; } 30% { transform: translateY(-4px); opacity: 1; } }
/* A reply being written: a caret after its last word says more is coming (the typing dots are gone by then). */
.streaming .text::after { content: ""; display: inline-block; width: 2px; height: 1.05em; margin-inline-start: 2px; vertical-align: -.15em; background: currentColor;
  animation: pw-caret 1s steps(1) infinite; }
@keyframes pw-caret { 50% { opacity: 0; } }
@media (prefers-reduced-motion: reduce) { .typing i, .panel, .streaming .text::after { animation: none; } .launcher { transition: none; } }
.notice, .error { font-size: 13px; padding: 8px 14px; border-top: 1px solid var(--pw-border); }
.notice { background: var(--pw-notice-bg); color: var(--pw-notice-fg); }
.error { background: var(--pw-error-bg); color: var(--pw-error-fg); }
.notice[hidden], .error[hidden] { display: none; }
.handoff { font-size: 13px; padding: 8px 14px; border-top: 1px solid var(--pw-border); }
.handoff[hidden], .handoff [hidden] { display: none; }
.handoff p { margin: 0 0 6px; }
.email-form label { display: block; font-weight: 600; margin-bottom: 4px; }
.email-row { display: flex; gap: 6px; }
/* 16 px like the other fields: a phone does not zoom into it */
.email-row input { flex: 1; min-width: 0; font: inherit; font-size: 16px; padding: 6px 8px; border: 1px solid var(--pw-border); border-radius: 8px; background: var(--pw-input); color: inherit; }
.email-row input[aria-invalid=true] { border-color: var(--pw-error-fg); }
.email-send { font: inherit; padding: 6px 12px; border: 0; border-radius: 8px; background: var(--pw-accent); color: var(--pw-on-accent); cursor: pointer; }
.email-send:disabled { opacity: .6; cursor: default; }
.email-error { color: var(--pw-error-fg); margin-top: 4px; }
/* The input bar only: the rating card and the email form are forms too, laid out by their own rules. */
.composer { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 8px; padding: 10px 12px; border-top: 1px solid var(--pw-border); background: var(--pw-bg); }
.composer textarea { flex: 1; min-width: 0; height: 44px; max-height: 132px; resize: none; overflow-y: auto; border: 1px solid var(--pw-border); border-radius: 22px;
  padding: 12px 16px; background: var(--pw-input); color: var(--pw-fg); font: 16px/1.25 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
textarea::placeholder { color: var(--pw-muted); }
/* Fields run each paragraph the way its own words do (an English line in an Arabic widget, left to right), and an
   empty one (its placeholder, its caret) the widget's way: their dir="auto" alone would make an empty field left to right. */
textarea, input { direction: inherit; unicode-bidi: plaintext; }
textarea:disabled { opacity: .6; }
textarea[aria-invalid=true] { border-color: var(--pw-error-fg); }
.count { flex-basis: 100%; order: 3; margin: 0 8px; font-size: 12.5px; color: var(--pw-error-fg); }
.count[hidden] { display: none; }
.sendstate { display: inline-flex; align-items: center; gap: 6px; font-size: 11.5px; color: var(--pw-muted); margin: 3px 6px 0; }
.sendstate[data-state=failed] { color: var(--pw-error-fg); }
.retry { font: inherit; font-weight: 650; color: var(--pw-error-fg); background: none; border: 1px solid currentColor; border-radius: 10px; padding: 1px 8px; cursor: pointer; }
.row[data-state=failed] .msg { opacity: .72; }
.row[data-grouped] > .time { display: none; }
.md { white-space: normal; }
.md p, .md ul, .md ol, .md pre { margin: 0 0 8px; }
.md > :last-child { margin-bottom: 0; }
.md ul, .md ol { padding-inline-start: 20px; }
.md li + li { margin-top: 2px; }
.md code { font: 13.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: rgba(127,127,127,.16); border-radius: 4px; padding: 1px 4px; }
.md pre { white-space: pre-wrap; background: rgba(127,127,127,.14); border-radius: 8px; padding: 8px 10px; }
.md pre code { background: none; padding: 0; }
.md a { color: inherit; text-decoration: underline; text-underline-offset: 2px; font-weight: 550; }
.md a:focus-visible { border-radius: 2px; }
.cite { display: inline-block; min-width: 18px; height: 18px; padding: 0 5px; margin: 0 1px; border-radius: 9px; background: var(--pw-accent);
  color: var(--pw-on-accent) !important; font: 600 11px/18px system-ui, sans-serif; text-align: center; text-decoration: none !important; vertical-align: 2px; }
a.cite:hover { filter: brightness(1.12); }
.sources { white-space: normal; margin-top: 8px; padding-top: 6px; border-top: 1px solid var(--pw-border); font-size: 13px; }
.sources-title { margin: 0 0 2px; font-weight: 650; color: var(--pw-muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.sources ol { margin: 0; padding-inline-start: 20px; }
.sources li::marker { font-weight: 600; color: var(--pw-accent-ink); }
.sources a { color: inherit; text-decoration: underline; text-underline-offset: 2px; }
.send { position: relative; flex: none; width: 44px; height: 44px; border: 0; border-radius: 50%; background: var(--pw-accent); color: var(--pw-on-accent); cursor: pointer;
  display: grid; place-items: center; }
.send svg { width: 20px; height: 20px; }
/* The arrow points the way the words run. */
.pw[dir=rtl] .send svg { transform: scaleX(-1); }
.send:disabled { opacity: .45; cursor: default; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 480px) {
  .panel { position: fixed; top: 0; left: 0; right: 0; bottom: auto; width: 100%; height: 100vh; height: 100dvh; max-height: none; border-radius: 0; animation: none; }
  .pw[data-vv] .panel { top: var(--pw-vv-top); height: var(--pw-vv-height); }
  .pw[data-open] .launcher { display: none; }
  .head { padding-top: max(14px, env(safe-area-inset-top)); padding-left: max(16px, env(safe-area-inset-left)); padding-right: max(12px, env(safe-area-inset-right)); }
  .pw[dir=rtl] .head { padding-left: max(12px, env(safe-area-inset-left)); padding-right: max(16px, env(safe-area-inset-right)); }
  .composer { padding-bottom: max(10px, env(safe-area-inset-bottom)); padding-left: max(12px, env(safe-area-inset-left)); padding-right: max(12px, env(safe-area-inset-right)); }
}
`;
