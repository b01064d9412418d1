export const STYLES = `
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1c1e21; background: #f4f6fb; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 10px 16px; padding: 14px 24px; background: #111827; color: #fff; }
header h1 { font-size: 18px; margin: 0; flex: 1 0 auto; }
header a, header button { color: #cbd5e1; background: none; border: 0; cursor: pointer; font: inherit; }
.window-picker { display: inline-flex; background: #1f2937; border-radius: 8px; padding: 3px; gap: 2px; }
.window-picker button { padding: 4px 12px; border-radius: 6px; color: #cbd5e1; }
.window-picker button[aria-pressed=true] { background: #f4f6fb; color: #111827; font-weight: 600; }
.window-picker button:focus-visible { outline: 2px solid #93c5fd; outline-offset: 1px; }
main { padding: 20px 24px; max-width: 1400px; margin: 0 auto; }
.card { background: #fff; border: 1px solid #e5e7eb; border-radius: 12px; padding: 14px 16px; }
.card h2 { margin: 0 0 10px; font-size: 14px; color: #374151; }
.kpis { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin-bottom: 16px; }
.kpi .value { font-size: 26px; font-weight: 650; }
.kpi .label { color: #6b7280; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.handoffs { margin-bottom: 16px; }
.handoff-kpis { margin-bottom: 10px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 440px), 1fr)); gap: 12px; margin-bottom: 16px; }
.chart { min-width: 0; }
.chart-body { min-height: 60px; overflow: hidden; width: 100%; }
.uplot { display: block; width: auto; }
.u-legend { font-size: 12px; text-align: left; margin-top: 4px; display: flex; flex-wrap: wrap; gap: 2px 14px; }
.u-legend tbody { display: contents; }
.u-legend .u-series { display: inline-flex; align-items: center; gap: 6px; min-width: 0; }
.u-legend .u-series th { font-weight: 500; color: #374151; }
.u-legend .u-series td { font-variant-numeric: tabular-nums; color: #111827; font-weight: 600; }
.empty { color: #6b7280; }
.operations { margin-top: 16px; }
.delivery-counts { display: flex; gap: 14px; margin-bottom: 8px; font-weight: 600; }
.count-delivered, .state-delivered { color: #047857; } .count-retrying, .state-retrying { color: #b45309; } .count-dead, .state-dead { color: #b91c1c; }
.bars { display: flex; flex-direction: column; gap: 6px; }
.bar { display: grid; grid-template-columns: 180px 1fr 50px; align-items: center; gap: 8px; }
.bar-label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: #374151; }
.bar-track { background: #eef2ff; border-radius: 4px; height: 12px; }
.bar-fill { background: #2f5bea; height: 100%; border-radius: 4px; min-width: 2px; }
.bar-fill.bad { background: #d64545; } .bar-fill.good { background: #1f9d55; }
.bar-value { text-align: right; font-variant-numeric: tabular-nums; }
.split { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; align-items: start; }
.split > .card { min-width: 0; }
.knowledge { margin-top: 12px; }
.knowledge h3 { margin: 12px 0 6px; font-size: 13px; color: #374151; }
.knowledge-counts { margin: 0; color: #4b5563; }
.table-wrap { overflow-x: auto; max-height: 560px; overflow-y: auto; }
.table-wrap table { width: 100%; border-collapse: collapse; min-width: 440px; }
.table-wrap th { position: sticky; top: 0; background: #fff; color: #6b7280; font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.table-wrap th, .table-wrap td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #f0f1f5; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 180px; }
tr[data-testid=conversation-row] { cursor: pointer; }
tr[data-testid=conversation-row]:hover, tr[aria-selected=true] { background: #eef2ff; }
.verdict-unresolved { color: #d64545; } .verdict-resolved { color: #1f9d55; }
.timeline ol { list-style: none; padding: 0; margin: 0 0 12px; }
.timeline-head { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px; }
.timeline-head h2 { overflow-wrap: anywhere; }
.timeline-actions { display: flex; align-items: center; gap: 8px; }
.timeline-actions button { padding: 6px 12px; border: 0; border-radius: 6px; background: #2f5bea; color: #fff; font: inherit; cursor: pointer; }
.timeline-actions button:disabled { background: #6b7280; cursor: progress; }
.timeline-actions button:focus-visible { outline: 2px solid #1e3a8a; outline-offset: 2px; }
.export-status { color: #374151; font-size: 13px; }
.timeline h3 { margin: 12px 0 6px; color: #374151; }
.entry { display: grid; grid-template-columns: 84px minmax(0, 190px) minmax(0, 1fr); gap: 8px; padding: 5px 0 5px 10px; border-bottom: 1px dashed #eef0f4;
  border-left: 3px solid #e5e7eb; }
.entry time { color: #6b7280; font-variant-numeric: tabular-nums; }
.entry .kind { font-family: ui-monospace, monospace; font-size: 12px; color: #2f5bea; overflow-wrap: anywhere; }
.entry .what { overflow-wrap: anywhere; }
.entry .llm { grid-column: 3; color: #6b7280; font-size: 12px; }
.entry[data-family=message] { border-left-color: #2f5bea; }
.entry[data-family=tool] { border-left-color: #8b5cf6; } .entry[data-family=tool] .kind { color: #7c3aed; }
.entry[data-family=confirmation] { border-left-color: #e3a008; } .entry[data-family=confirmation] .kind { color: #b45309; }
.entry[data-family=handoff] { border-left-color: #0d9488; } .entry[data-family=handoff] .kind { color: #0f766e; }
.entry[data-family=llm] { border-left-color: #cbd5e1; } .entry[data-family=llm] .kind { color: #6b7280; }
.entry[data-family=turn] .kind { color: #6b7280; }
.entry[data-family=bad] { border-left-color: #d64545; } .entry[data-family=bad] .kind { color: #d64545; }
form.login { max-width: 420px; margin: 80px auto; display: flex; flex-direction: column; gap: 10px; }
form.login input { padding: 10px 12px; border: 1px solid #cfd4e0; border-radius: 8px; font: inherit; }
form.login button { padding: 10px; border: 0; border-radius: 8px; background: #2f5bea; color: #fff; font: inherit; cursor: pointer; }
.error { color: #b00020; }
.notice { margin: 0; padding: 8px 10px; border-radius: 8px; background: #e8f5ec; color: #14532d; }
.filters { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 12px; }
.filters .range { display: inline-flex; align-items: center; gap: 6px; margin: 0; }
.filters input, .filters select { background: #1f2937; color: #f9fafb; border: 1px solid #4b5563; border-radius: 6px; padding: 3px 6px; font: inherit; color-scheme: dark; }
.filters .range button { padding: 4px 10px; border-radius: 6px; border: 1px solid #4b5563; color: #f9fafb; }
.filters label { color: #e5e7eb; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
.table-wrap:focus-visible { outline: 2px solid #2f5bea; outline-offset: 2px; }
.table-wrap td.last-message { max-width: 200px; white-space: normal; overflow-wrap: anywhere; } td.last-message small { display: block; color: #6b7280; }
@media (max-width: 1300px) { .split { grid-template-columns: minmax(0, 1fr); } }
@media (max-width: 700px) { header { flex-wrap: wrap; } main { padding: 12px; } .entry { grid-template-columns: 70px minmax(0, 1fr); } .entry .what, .entry .llm { grid-column: 1 / -1; } }
`;
