/** The page's only stylesheet, inlined: system fonts, no web fonts, readable when printed. */
export const REPORT_CSS = `
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", Arial, sans-serif;
  color: #1b1b1b; background: #fff; margin: 0 auto; max-width: 1200px; padding: 24px 32px 48px; }
h1 { font-size: 1.7em; margin: 0 0 4px; }
.subtitle { color: #555; margin: 0 0 24px; }
h2 { font-size: 1.25em; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
code { font: 0.92em/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  background: #f3f3f3; padding: 1px 4px; border-radius: 3px; }
figure { margin: 8px 0 16px; }
figure .chart { overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #444; font-size: 0.92em; margin-top: 4px; }
figcaption .files { color: #666; margin-left: 6px; white-space: nowrap; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.9em; margin: 8px 0; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f7f7f7; font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:hover { background: #fafafa; }
table.sortable th { cursor: pointer; user-select: none; white-space: nowrap; }
td { white-space: nowrap; }
td:last-child { white-space: normal; }
table.sortable th[aria-sort="ascending"]::after { content: " ▲"; font-size: 0.8em; }
table.sortable th[aria-sort="descending"]::after { content: " ▼"; font-size: 0.8em; }
.table-bar { display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; margin: 8px 0 4px; }
.table-filter { font: inherit; padding: 4px 8px; border: 1px solid #bbb; border-radius: 4px; width: 22em; max-width: 100%; }
.table-count, .table-hint { color: #666; font-size: 0.88em; }
@media (max-width: 600px) {
  body { padding: 12px 12px 32px; } h1 { font-size: 1.4em; }
  /* a phone scrolls a wide chart sideways at its own size instead of shrinking it past reading */
  figure svg { max-width: none; }
}
footer { margin-top: 40px; color: #777; font-size: 0.85em; border-top: 1px solid #eee; padding-top: 8px; }
@media print { figure { break-inside: avoid; } th { position: static; } }
`;
