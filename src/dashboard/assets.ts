/**
 * The dashboard's one stylesheet and one script, served from the Worker
 * itself (no build step, no CDN: the Content-Security-Policy allows only
 * 'self'). The script only refreshes the parts of a page marked `data-live`;
 * every page works without it.
 *
 * @module
 */

export const REFRESH_MS = 5000;
/** A subscribed page still refreshes this often, for what its subscriptions do not follow (a job in another object). */
export const LIVE_FALLBACK_MS = 30_000;
/**
 * A message refreshes the page's live parts at most this long after it, and messages meanwhile are that one refresh:
 * a busy scope's stream of changes costs a tab one listing a second, not one per message.
 */
export const LIVE_DEBOUNCE_MS = 1_000;

export const APP_CSS = `
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#f7f8fa; --card:#fff; --accent:#3b5bdb;
  --ok:#2f9e44; --bad:#e03131; --warn:#f08c00; --info:#1c7ed6; --idle:#868e96; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
header { display:flex; align-items:center; gap:24px; padding:10px 24px; background:#111827; color:#fff; }
header .brand { font-weight:700; letter-spacing:.3px; color:#fff; }
header nav { display:flex; gap:4px; flex:1; }
header nav a { color:#cbd5e1; padding:6px 10px; border-radius:6px; }
header nav a.on, header nav a:hover { background:#1f2937; color:#fff; text-decoration:none; }
header form button { background:transparent; color:#cbd5e1; border:1px solid #374151; }
/* Wide enough for the overview's 13 columns at 1400 px and up (test/browser/dashboard.test.ts measures it). */
main { max-width:1600px; margin:0 auto; padding:20px 24px 48px; }
.card > h2:first-child { margin-top:0; }
.kinds { color:var(--bad); font-size:12px; }
h1 { font-size:20px; margin:4px 0 16px; } h2 { font-size:15px; margin:24px 0 8px; color:#344054; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px; margin-bottom:16px; overflow-x:auto; }
table { border-collapse:collapse; width:100%; font-variant-numeric:tabular-nums; }
th, td { text-align:left; padding:7px 10px; border-bottom:1px solid var(--line); vertical-align:top; white-space:nowrap; }
th { font-weight:600; color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.4px; }
td.num, th.num { text-align:right; } td.wrap { white-space:normal; word-break:break-word; max-width:420px; }
tr:last-child td { border-bottom:0; }
/* The counts table: headers and failure kinds wrap, long type names break, so it fits beside its last column; on a
   narrow screen it scrolls inside its card and that column (Pause) stays in view at the card's right edge. */
table.stats th { white-space:normal; vertical-align:bottom; }
table.stats th, table.stats td { padding:7px 8px; }
table.stats td.label { white-space:normal; overflow-wrap:anywhere; min-width:160px; max-width:300px; }
table.stats td.kinds { white-space:normal; min-width:100px; }
table.stats .action { position:sticky; right:0; background:var(--card); }
table.stats tr.lag-alert .action { background:#fff5f5; }
.zero { color:#c0c6d0; }
.chip { display:inline-block; padding:1px 8px; border-radius:999px; font-size:12px; font-weight:600; color:#fff; background:var(--idle); }
.chip.pending { background:var(--info); } .chip.running { background:var(--warn); } .chip.waiting { background:#7c5cc4; } .chip.completed { background:var(--ok); }
.chip.failed { background:var(--bad); } .chip.cancelled, .chip.superseded, .chip.expired { background:var(--idle); }
.alert { color:var(--bad); font-weight:700; }
.lag-alert { background:#fff5f5; }
.banner { padding:10px 14px; border-radius:8px; margin-bottom:16px; }
.banner.error { background:#fff5f5; border:1px solid #ffc9c9; color:#c92a2a; }
.banner.notice { background:#ebfbee; border:1px solid #b2f2bb; color:#2b8a3e; }
pre { background:#0f172a; color:#e2e8f0; padding:12px; border-radius:8px; overflow:auto; max-height:420px; margin:0; font-size:12.5px; }
form.inline { display:inline; }
form.signal { display:flex; flex-wrap:wrap; gap:8px; align-items:end; margin-top:8px; } form.signal label { flex:1; min-width:240px; }
form.filters { display:flex; flex-wrap:wrap; gap:8px; align-items:end; }
label { display:flex; flex-direction:column; gap:2px; font-size:12px; color:var(--muted); }
input, select, textarea { font:inherit; padding:5px 8px; border:1px solid #cfd4dc; border-radius:6px; background:#fff; color:var(--fg); }
button { font:inherit; padding:5px 12px; border-radius:6px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; }
button.secondary { background:#fff; color:var(--accent); } button.danger { background:var(--bad); border-color:var(--bad); }
.row { display:flex; gap:16px; flex-wrap:wrap; } .row > .card { flex:1; min-width:300px; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; margin:0; }
dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; word-break:break-all; }
.muted { color:var(--muted); } .small { font-size:12px; }
footer { color:var(--muted); font-size:12px; text-align:right; max-width:1600px; margin:0 auto; padding:0 24px 24px; }
.login { max-width:380px; margin:12vh auto; } .login input { width:100%; margin:8px 0 12px; }
.chart text { font-size:11px; fill:var(--muted); } .chart .grid { stroke:var(--line); }
.legend { display:flex; gap:16px; font-size:12px; color:var(--muted); margin-bottom:6px; }
.sw-ok, .chart .bar-ok { background:var(--ok); fill:var(--ok); } .sw-bad, .chart .bar-bad { background:var(--bad); fill:var(--bad); }
.legend i { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:4px; vertical-align:-1px; }
`;

export const APP_JS = `
// Refresh the parts of this page marked data-live without a reload (the header tells the server only those parts
// are used): at once when a live subscription of the page (body data-subscribe: docs/http-api.md "Live
// subscriptions") says something changed, else every ${REFRESH_MS / 1000} s (${LIVE_FALLBACK_MS / 1000} s on a
// subscribed page, for what its subscriptions do not follow). Skipped while the tab is hidden or a field is being
// edited; stops when the session ends.
(function () {
  var busy = false, again = false, soon = null;
  var paths = (document.body.getAttribute("data-subscribe") || "").split(" ").filter(Boolean);
  var timer = setInterval(refresh, paths.length > 0 ? ${LIVE_FALLBACK_MS} : ${REFRESH_MS});
  var open = paths.length;
  paths.forEach(function (path) {
    var ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + path);
    ws.onmessage = function () { if (!soon) soon = setTimeout(function () { soon = null; refresh(); }, ${LIVE_DEBOUNCE_MS}); };
    // A job's subscription ends with the job: the page goes back to the timer, as its footer then says.
    ws.onclose = function () {
      refresh();
      if (--open === 0) { clearInterval(timer); timer = setInterval(refresh, ${REFRESH_MS}); }
    };
  });
  function editing() {
    var a = document.activeElement;
    return a && (a.tagName === "INPUT" || a.tagName === "SELECT" || a.tagName === "TEXTAREA");
  }
  function refresh() {
    if (busy) { again = true; return; }
    if (document.hidden || editing()) return;
    busy = true;
    fetch(location.href, { credentials: "same-origin", redirect: "manual", headers: { "x-edgequeue-live": "1" } })
      .then(function (res) {
        if (res.type === "opaqueredirect" || res.status === 401) { clearInterval(timer); return null; }
        return res.ok ? res.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (fresh) el.replaceWith(document.importNode(fresh, true));
        });
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
})();
`;
