// Styles live inside the shadow root, on an inner wrapper; `:host` rules are
// !important so a host page's `* { … !important }` cannot reach in.
export const STYLES = `
:host { all: initial !important; position: fixed !important; right: 20px !important; bottom: 20px !important; z-index: 2147483000 !important; font-size: 15px !important; }
.pw { font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1c1e21; }
.pw * { box-sizing: border-box; }
.launcher { width: 56px; height: 56px; border-radius: 50%; border: 0; background: #2f5bea; color: #fff; cursor: pointer; box-shadow: 0 4px 14px rgba(0,0,0,.25); display: grid; place-items: center; }
.launcher:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid #ffb400; outline-offset: 2px; }
.launcher { position: relative; }
.launcher svg { width: 26px; height: 26px; }
.badge { position: absolute; top: -4px; right: -4px; min-width: 20px; height: 20px; padding: 0 5px; border-radius: 10px; background: #d93025; color: #fff; font: 600 12px/20px system-ui, sans-serif; text-align: center; }
.badge[hidden] { display: none; }
.panel { position: absolute; right: 0; bottom: 70px; width: 360px; height: 520px; max-height: calc(100vh - 100px); background: #fff; border-radius: 14px; box-shadow: 0 10px 40px rgba(0,0,0,.25); display: flex; flex-direction: column; overflow: hidden; }
.panel[hidden] { display: none; }
.head { display: flex; align-items: center; gap: 8px; padding: 12px 14px; background: #2f5bea; color: #fff; }
.title { font-weight: 600; flex: 1; }
.status { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: rgba(255,255,255,.2); }
.dot { font-size: 12px; color: #ff8a80; }
.dot[data-state=Connected] { color: #7CFC9A; }
.dot[data-state=Reconnecting], .dot[data-state=Connecting] { color: #ffd166; }
.close { background: transparent; border: 0; color: #fff; font-size: 22px; cursor: pointer; line-height: 1; padding: 0 4px; }
.log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 8px; background: #f6f7fb; }
.msg { max-width: 85%; padding: 8px 12px; border-radius: 14px; white-space: pre-wrap; word-wrap: break-word; }
.msg[data-role=user] { align-self: flex-end; background: #2f5bea; color: #fff; border-bottom-right-radius: 4px; }
.msg[data-role=user][data-delivered=false] { opacity: .7; }
.msg[data-role=assistant] { align-self: flex-start; background: #fff; border: 1px solid #e3e6ee; border-bottom-left-radius: 4px; }
.tag { display: block; font-size: 11px; font-weight: 600; color: #2f5bea; text-transform: uppercase; letter-spacing: .04em; }
.typing { align-self: flex-start; color: #667; font-size: 13px; padding: 2px 6px; }
.typing[hidden] { display: none; }
.confirm { align-self: stretch; background: #fff8e6; border: 1px solid #f3d48a; border-radius: 10px; padding: 10px; }
.confirm p { margin: 0 0 8px; }
.confirm button { border: 0; border-radius: 8px; padding: 6px 14px; margin-right: 8px; cursor: pointer; font: inherit; }
.approve { background: #1f9d55; color: #fff; }
.decline { background: #e3e6ee; color: #1c1e21; }
.confirm button:disabled { opacity: .5; cursor: default; }
.error { color: #b00020; font-size: 13px; padding: 6px 12px; background: #fdecee; }
.error[hidden] { display: none; }
form { display: flex; gap: 8px; padding: 10px; border-top: 1px solid #e3e6ee; background: #fff; }
input { flex: 1; min-width: 0; border: 1px solid #cfd4e0; border-radius: 10px; padding: 9px 12px; font: inherit; }
.send { border: 0; border-radius: 10px; background: #2f5bea; color: #fff; padding: 0 16px; font: inherit; cursor: pointer; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 480px) {
  .panel { position: fixed; inset: 0; width: 100vw; height: 100vh; height: 100dvh; max-height: none; border-radius: 0; }
}
`;
