/**
 * Cloudflare Workflows' durations (`WorkflowDuration`): milliseconds, or `"<n> <unit>"` — second, minute, hour, day,
 * week, month, year, singular or plural. A string that is neither is refused naming the field.
 *
 * @module
 */
const UNIT_MS: Record<string, number> = {
  millisecond: 1,
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
  month: 2_592_000_000,
  year: 31_536_000_000,
};

/** durationMs: a WorkflowDuration in milliseconds; throws a TypeError naming `field` for anything else. */
export function durationMs(value: unknown, field: string): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return Math.round(value);
  const m = typeof value === "string" ? /^\s*(\d+(?:\.\d+)?)\s*([a-z]+?)s?\s*$/i.exec(value) : null;
  const unit = m ? UNIT_MS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new TypeError(`${field}: ${JSON.stringify(value)} is not a duration — milliseconds, or "<n> <unit>" with a unit of ${Object.keys(UNIT_MS).join(", ")}`);
  }
  return Math.round(Number(m[1]) * unit);
}
