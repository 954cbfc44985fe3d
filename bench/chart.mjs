// A small SVG line chart, drawn by hand so the benchmark needs no plotting library:
// panels side by side, each one series on a log-scale x axis (depth, scopes) from zero up.
const W = 420;
const H = 260;
const M = { top: 36, right: 20, bottom: 46, left: 62 };

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
const fmt = (n) => (n >= 1000 ? `${n % 1000 === 0 ? n / 1000 : (n / 1000).toFixed(1)}k` : String(n));

/** niceScale: a round tick step (1, 2, 2.5 or 5 × 10^n) giving about five ticks up to at least v. */
function niceScale(v) {
  const rough = Math.max(1, v) / 5;
  const p = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((m) => m >= rough) ?? 10 * p;
  return { step, max: Math.ceil(v / step) * step };
}

function panel({ title, xLabel, yLabel, points }, dx) {
  const iw = W - M.left - M.right;
  const ih = H - M.top - M.bottom;
  const xs = points.map((p) => Math.log10(p.x));
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const { step, max: yMax } = niceScale(Math.max(...points.map((p) => p.y)) * 1.1);
  // Points sit inside the plot, clear of the axis labels.
  const pad = 24;
  const px = (x) => M.left + pad + (x1 === x0 ? (iw - 2 * pad) / 2 : ((Math.log10(x) - x0) / (x1 - x0)) * (iw - 2 * pad));
  const py = (y) => M.top + ih - (y / yMax) * ih;
  const out = [`<g transform="translate(${dx},0)">`];
  out.push(`<text x="${M.left}" y="20" font-size="14" font-weight="600">${esc(title)}</text>`);
  for (let v = 0; v <= yMax; v += step) {
    out.push(`<line x1="${M.left}" x2="${M.left + iw}" y1="${py(v)}" y2="${py(v)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 6}" y="${py(v) + 4}" font-size="11" text-anchor="end">${fmt(Math.round(v))}</text>`);
  }
  for (const p of points) out.push(`<text x="${px(p.x)}" y="${M.top + ih + 16}" font-size="11" text-anchor="middle">${fmt(p.x)}</text>`);
  out.push(`<text x="${M.left + iw / 2}" y="${H - 8}" font-size="12" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(14,${M.top + ih / 2}) rotate(-90)" font-size="12" text-anchor="middle">${esc(yLabel)}</text>`);
  out.push(`<polyline fill="none" stroke="#f38020" stroke-width="2" points="${points.map((p) => `${px(p.x)},${py(p.y)}`).join(" ")}"/>`);
  for (const p of points) {
    out.push(`<circle cx="${px(p.x)}" cy="${py(p.y)}" r="3.5" fill="#f38020"/>`);
    out.push(`<text x="${px(p.x)}" y="${py(p.y) - 8}" font-size="10" text-anchor="middle" stroke="#fff" stroke-width="3" paint-order="stroke">${p.y}</text>`);
  }
  out.push("</g>");
  return out.join("\n");
}

/** chartSvg: one panel per entry, side by side, with a caption (machine, date) underneath. */
export function chartSvg(panels, caption) {
  const width = W * panels.length;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H + 22}" viewBox="0 0 ${width} ${H + 22}" font-family="system-ui, sans-serif">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...panels.map((p, i) => panel(p, i * W)),
    `<text x="${width / 2}" y="${H + 14}" font-size="10" fill="#666" text-anchor="middle">${esc(caption)}</text>`,
    "</svg>",
    "",
  ].join("\n");
}
