/** @jsxImportSource hono/jsx */
/**
 * The overview's throughput chart: completed and failed jobs per minute over
 * the last hour, as stacked bars in inline SVG (no script, no library). Each
 * bar carries a <title>, so hovering names the minute and its counts.
 *
 * @module
 */
import { MINUTE_MS, minuteOf, type MinuteCounters } from "../metrics/counters";
import { clock } from "./format";

const W = 1160;
const H = 200;
const PAD = { left: 44, right: 8, top: 10, bottom: 22 };

export interface ChartPoint {
  minute: number;
  completed: number;
  failed: number;
}

/** perMinute: one point per minute of the window (empty minutes are zeros), summed over types. */
export function perMinute(rows: readonly MinuteCounters[], now: number, minutes: number): ChartPoint[] {
  const last = minuteOf(now);
  const points = Array.from({ length: minutes }, (_, i) => ({ minute: last - (minutes - 1 - i) * MINUTE_MS, completed: 0, failed: 0 }));
  const first = points[0]!.minute;
  for (const r of rows) {
    const p = points[(r.minute - first) / MINUTE_MS];
    if (p) {
      p.completed += r.completed;
      p.failed += r.failed;
    }
  }
  return points;
}

/** niceMax: the axis top, a round number at or above the largest bar. */
function niceMax(v: number): number {
  if (v <= 4) return 4;
  const step = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * step >= v) return m * step;
  return 10 * step;
}

export function ThroughputChart(props: { points: ChartPoint[] }) {
  const { points } = props;
  const top = niceMax(Math.max(0, ...points.map((p) => p.completed + p.failed)));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / points.length;
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const ticks = [0, top / 4, top / 2, (3 * top) / 4, top];
  return (
    <div>
      <div class="legend">
        <span><i class="sw-ok"></i>completed</span>
        <span><i class="sw-bad"></i>failed</span>
        <span>per minute, last {points.length} minutes (UTC)</span>
      </div>
      <svg class="chart" viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label="completed and failed jobs per minute">
        {ticks.map((t) => (
          <g>
            <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
            <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end">{Number.isInteger(t) ? t : t.toFixed(1)}</text>
          </g>
        ))}
        {points.map((p, i) => {
          const x = PAD.left + i * slot + 1;
          const w = Math.max(1, slot - 2);
          return (
            <g>
              <title>{`${clock(p.minute)} — ${p.completed} completed, ${p.failed} failed`}</title>
              <rect x={x} y={y(p.completed)} width={w} height={y(0) - y(p.completed)} class="bar-ok" />
              <rect x={x} y={y(p.completed + p.failed)} width={w} height={y(p.completed) - y(p.completed + p.failed)} class="bar-bad" />
              {i % 10 === 0 || i === points.length - 1 ? (
                <text x={x + w / 2} y={H - 6} text-anchor="middle">{clock(p.minute)}</text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </div>
  );
}
