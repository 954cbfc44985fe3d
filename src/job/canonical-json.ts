/**
 * canonicalJson: JSON text with every object's keys in sorted order, so two values that are equal as JSON — `{a, b}`
 * and `{b, a}` — have one text. Event waits compare a wait's `match` with an event's payload by it
 * (scope/workflow/event-waits.ts; the test kit, testing/run-job.ts, the same way).
 *
 * @module
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
  });
}
