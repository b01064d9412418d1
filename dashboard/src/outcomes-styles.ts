// Styles of the outcomes and health panels (issue 39): their own file beside styles.ts.
export const OUTCOME_STYLES = `
.section-title { font-size: 15px; margin: 4px 0 10px; color: #111827; }
.outcomes, .health { margin-bottom: 16px; }
.kpi .note { color: #4b5563; font-size: 12px; margin-top: 2px; }
.kpi[data-tone=good] .value { color: #047857; } .kpi[data-tone=bad] .value { color: #b91c1c; }
.kpi .value.word { font-size: 18px; line-height: 37px; }
.card h3 { margin: 0 0 10px; font-size: 13px; color: #374151; }
.split.even { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); margin-bottom: 12px; }
.outcome-list .list-head { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 10px; margin-bottom: 8px; }
.outcome-list .list-head h3 { margin: 0; flex: 1 0 auto; }
.outcome-list select, .outcome-list input { padding: 4px 6px; border: 1px solid #9ca3af; border-radius: 6px; font: inherit; background: #fff; color: #111827; }
.outcome-list button { padding: 5px 12px; border: 0; border-radius: 6px; background: #2f5bea; color: #fff; font: inherit; cursor: pointer; }
.outcome-list button:focus-visible, .errors button:focus-visible { outline: 2px solid #1e3a8a; outline-offset: 2px; }
.outcome-resolved_confirmed, .outcome-resolved_assumed { color: #047857; } .outcome-abandoned, .outcome-unresolved { color: #b91c1c; }
.outcome-handed_over { color: #0f766e; } .outcome-open { color: #4b5563; }
.errors { list-style: none; margin: 0; padding: 0; max-height: 320px; overflow-y: auto; }
.errors li { display: grid; grid-template-columns: 170px 150px minmax(0, 1fr) auto; gap: 8px; align-items: baseline; padding: 5px 0; border-bottom: 1px solid #f0f1f5; }
.errors li.empty { display: block; }
.errors time { color: #4b5563; font-variant-numeric: tabular-nums; }
.errors .code { color: #b91c1c; font-size: 12px; overflow-wrap: anywhere; }
.errors .what { overflow-wrap: anywhere; }
.errors .link { background: none; border: 0; color: #1d4ed8; text-decoration: underline; cursor: pointer; font: inherit; padding: 0; }
.errors .muted { color: #4b5563; }
@media (max-width: 900px) { .split.even { grid-template-columns: minmax(0, 1fr); } .errors li { grid-template-columns: minmax(0, 1fr); } }
`;
