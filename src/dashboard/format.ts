/**
 * How the dashboard writes times, durations and JSON. Times are UTC, like
 * cron and the API's epoch milliseconds.
 *
 * @module
 */

export function utc(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** utcMs: with milliseconds, for timelines where steps are milliseconds apart. */
export function utcMs(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
}

export function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

/** duration: 850 ms, 12 s, 4 m 10 s, 3 h 5 m, 2 d 4 h. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} m ${s % 60} s` : `${m} m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} m` : `${h} h`;
  return h % 24 ? `${Math.floor(h / 24)} d ${h % 24} h` : `${Math.floor(h / 24)} d`;
}

export function ago(ms: number | null | undefined, now: number): string {
  if (ms === null || ms === undefined) return "—";
  return ms > now ? `in ${duration(ms - now)}` : `${duration(now - ms)} ago`;
}

/** pretty: stored JSON text, indented (the page escapes it; it is never markup). */
export function pretty(json: unknown): string {
  return JSON.stringify(json, null, 2);
}
