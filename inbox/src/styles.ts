// The inbox's styles: a four-column layout at 1,280 px (views, list, conversation, customer), two columns below
// 1,100 px (views across the top, the customer panel under the list, the conversation as tall as the screen, so its
// composer is always in sight). Colours meet WCAG AA contrast.
export const STYLES = `
:root { --bg: #f6f7f9; --panel: #fff; --text: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b57d0; --accent-text: #fff;
  --late: #b3261e; --late-bg: #fdecea; --note: #fff6d6; --note-line: #c69026; --agent: #e8f0fe; --tool: #f3f0ff; --ok: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--text); background: var(--bg); }
button, input, select, textarea { font: inherit; color: inherit; }
button { cursor: pointer; border: 1px solid var(--line); background: var(--panel); border-radius: 6px; padding: 6px 12px; }
button.primary { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
button.link { border: 0; background: none; color: var(--accent); text-decoration: underline; padding: 2px 0; }
button:disabled { opacity: .6; cursor: default; }
:focus-visible { outline: 3px solid #f4b400; outline-offset: 1px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
h1 { font-size: 18px; margin: 0; }
h2 { font-size: 16px; margin: 0; }
h3, h2.minor { font-size: 13px; margin: 16px 0 6px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.top { display: flex; gap: 16px; align-items: center; padding: 10px 16px; background: var(--panel); border-bottom: 1px solid var(--line); }
.top .me { margin-left: auto; font-weight: 600; }
.live { font-size: 12px; color: var(--muted); }
.live.down { color: var(--late); background: var(--late-bg); border: 1px solid var(--late); border-radius: 4px; padding: 1px 8px; font-weight: 600; }
#app { display: flex; flex-direction: column; height: 100vh; }
.layout { display: grid; grid-template-columns: 230px 330px minmax(0, 1fr) 250px; flex: 1; min-height: 0; }
.left { padding: 12px; border-right: 1px solid var(--line); overflow: auto; background: var(--panel); }
.middle { border-right: 1px solid var(--line); overflow: auto; }
.conversation { display: flex; flex-direction: column; min-width: 0; min-height: 0; background: var(--panel); }
.side-slot { border-left: 1px solid var(--line); overflow: auto; background: var(--panel); }
.views ul, .items, .presence, .others { list-style: none; margin: 0; padding: 0; }
.view { width: 100%; display: flex; gap: 6px; align-items: center; text-align: left; border: 0; border-radius: 6px; padding: 8px 10px; margin-bottom: 2px; background: none; }
.view[aria-current=page] { background: var(--agent); font-weight: 600; }
.view .count { margin-left: auto; color: var(--muted); }
.unread { background: var(--accent); color: var(--accent-text); border-radius: 10px; padding: 0 7px; font-size: 12px; font-weight: 600; }
.search { margin: 14px 0; display: grid; gap: 4px; }
.search label { font-size: 12px; color: var(--muted); }
input[type=text], input[type=search], input[type=email], input[type=password], select, textarea { border: 1px solid var(--line); border-radius: 6px; padding: 7px 9px; background: var(--panel); width: 100%; }
.item { width: 100%; text-align: left; display: grid; grid-template-columns: minmax(0, 1fr); gap: 3px; border: 0; border-bottom: 1px solid var(--line); border-radius: 0; padding: 10px 14px; background: none; }
.item[aria-current=true], .item.late[aria-current=true] { background: var(--agent); box-shadow: inset 3px 0 0 var(--accent); }
.item:focus-visible { outline-offset: -3px; }
.item .line1 { display: flex; gap: 8px; align-items: baseline; }
.item .who { min-width: 0; font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.item .wait { flex: none; margin-left: auto; font-variant-numeric: tabular-nums; color: var(--muted); font-weight: 600; }
.item.late { background: var(--late-bg); }
.item.late .wait { color: var(--late); }
.item.late .wait::before { content: "SLA · "; }
.item .meta { display: flex; gap: 8px; align-items: center; font-size: 12px; color: var(--muted); }
.item .preview { font-size: 13px; color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.channel { border: 1px solid var(--line); border-radius: 4px; padding: 0 5px; }
.empty { padding: 24px; color: var(--muted); }
.notice p:first-child { color: var(--text); font-weight: 600; }
.conv-head { display: flex; flex-wrap: wrap; gap: 10px; justify-content: space-between; align-items: center; padding: 12px 16px; border-bottom: 1px solid var(--line); }
.conv-head > div { min-width: 0; max-width: 100%; }
.conv-head h2 { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.conv-head .holder { margin: 2px 0 0; color: var(--muted); }
.actions { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; }
.actions select { width: auto; max-width: 12em; }
.transcript { list-style: none; margin: 0; padding: 16px; flex: 1; overflow: auto; display: flex; flex-direction: column; gap: 10px; background: var(--bg); }
.transcript > li { max-width: 78%; border-radius: 10px; padding: 8px 12px; background: var(--panel); border: 1px solid var(--line); }
.transcript p { margin: 4px 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.transcript .by { display: flex; flex-wrap: wrap; gap: 0 8px; font-size: 12px; font-weight: 600; color: var(--muted); }
.transcript time { font-weight: 400; }
.msg.customer { align-self: flex-start; }
.msg.assistant, .msg.agent { align-self: flex-end; }
.msg.agent { background: var(--agent); border-color: #a8c7fa; }
.msg.note { align-self: stretch; max-width: none; background: var(--note); border: 1px dashed var(--note-line); }
.sources { margin-top: 6px; padding-top: 4px; border-top: 1px solid var(--line); font-size: 12px; color: var(--muted); }
.sources p { margin: 0; font-weight: 600; } .sources ol { margin: 0; padding-left: 20px; } .sources a { color: inherit; }
.act { align-self: center; max-width: 92% !important; background: var(--tool) !important; font-size: 13px; }
.act.handoff, .act.resolved { background: var(--panel) !important; } .act.resolved .by { color: var(--ok); }
.act.confirmation.approved .by, .act.tool.ok .by { color: var(--ok); }
.act.tool.failed .by, .act.confirmation.denied .by { color: var(--late); }
.act .args { display: block; margin-top: 4px; font-size: 12px; overflow-wrap: anywhere; }
.act pre { margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; background: var(--panel); padding: 6px; border-radius: 4px; }
.act h3 { margin: 6px 0 0; font-size: 12px; text-transform: none; letter-spacing: 0; color: inherit; }
.composer { border-top: 1px solid var(--line); padding: 10px 16px; display: grid; gap: 6px; position: relative; }
.composer.noting textarea { background: var(--note); }
.composer .row { display: flex; gap: 10px; align-items: center; }
.composer .row button { margin-left: auto; }
.hint { margin: 0; font-size: 12px; color: var(--muted); }
.check { display: flex; gap: 6px; align-items: center; }
.suggestions { list-style: none; margin: 0; padding: 4px; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); }
.suggestions li { padding: 4px 6px; cursor: pointer; } .suggestions li[aria-selected=true] { background: var(--agent); }
.customer { padding: 12px 16px; }
.customer dl { margin: 0; }
.customer dt { color: var(--muted); font-size: 12px; margin-top: 8px; } .customer dt:first-child { margin-top: 0; }
.customer dd { margin: 0; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.presence li { display: flex; gap: 6px; align-items: center; font-size: 13px; padding: 2px 0; }
.dot { flex: none; width: 8px; height: 8px; border-radius: 50%; background: #8c959f; }
.p-online .dot { background: var(--ok); } .p-away .dot { background: #bf8700; }
.p-unknown { color: var(--muted); } .p-unknown .dot { background: none; border: 1px solid #8c959f; }
.presence-note:empty { display: none; } .presence-note { margin-bottom: 4px; }
.settings { margin: 12px 0; font-size: 13px; } .settings summary { cursor: pointer; color: var(--accent); }
.alerts { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 6px 10px; }
.add-agent { display: grid; gap: 4px; margin-top: 8px; } .add-agent .hint { overflow-wrap: anywhere; }
.keys { display: grid; grid-template-columns: auto 1fr; gap: 4px 10px; margin: 0; } .keys dd { margin: 0; }
kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 5px; font: 12px ui-monospace, monospace; background: var(--bg); }
.toast { position: fixed; bottom: 16px; left: 16px; max-width: min(420px, calc(100vw - 32px)); z-index: 2; margin: 0; background: var(--text); color: #fff; padding: 6px 14px; border-radius: 6px; }
.toast:empty { display: none; }
.signin { max-width: 360px; margin: 10vh auto; display: grid; gap: 16px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 20px; display: grid; gap: 8px; }
.error { color: var(--late); margin: 0; min-height: 1em; }
@media (max-width: 1100px) {
  .layout { grid-template-columns: 280px minmax(0, 1fr); grid-template-rows: auto minmax(0, 1fr) auto; }
  .left { grid-area: 1 / 1 / 2 / -1; border-right: 0; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; }
  .views ul { display: flex; gap: 4px; } .view { width: auto; margin: 0; }
  .search { margin: 0; min-width: 220px; } .settings { margin: 0; } .presence { display: flex; gap: 10px; } .presence-note { margin: 0; }
  .middle { grid-area: 2 / 1; }
  .conversation { grid-area: 2 / 2 / 4 / 3; }
  .side-slot { grid-area: 3 / 1; max-height: 40vh; border-left: 0; border-top: 1px solid var(--line); border-right: 1px solid var(--line); }
}
`;
