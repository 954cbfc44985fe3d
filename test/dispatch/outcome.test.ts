/**
 * Reading a handler's outcome (src/dispatch/outcome.ts): a wait outcome's plain waits are read without the schema
 * (a 1,000-invoke fan-out's outcome), and must read exactly as WaitItemSchema reads them — the same items, the same
 * refusals — for any input.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readOutcome, WAITS_MAX, WaitItemSchema } from "../../src/dispatch/outcome";

const WaitOutcome = z.object({
  id: z.string(),
  kind: z.literal("wait"),
  waits: z.array(WaitItemSchema).min(1).max(WAITS_MAX),
  start: z.object({ at: z.number().int().min(0), seed: z.string().max(64) }),
});

/** What the schema alone makes of an outcome: the reading readOutcome must give. */
function bySchema(item: unknown) {
  const parsed = WaitOutcome.safeParse(item);
  if (!parsed.success) return null;
  const { id, ...outcome } = parsed.data;
  return { id, outcome };
}

const int = (min: number, max: number) => fc.integer({ min, max });
/** A well-formed plain wait, the fast path's. */
const plainItem = fc.record({ seq: int(0, 100_000), kind: fc.constantFrom("invoke", "signal", "token_wait", "event"), name: fc.string({ minLength: 1, maxLength: 256 }), startedAt: int(0, 2 ** 40), request: fc.jsonValue() });
/** Values at and past each field's edges, and of other types. */
const edges = [-1, 0, 1.5, 100_000, 100_001, 2 ** 53, Infinity, NaN, "7", null, undefined, true, "", "x".repeat(256), "x".repeat(257), [1], {}, { a: 1 }, "invoke", "sleep"];
const field = fc.constantFrom("seq", "kind", "name", "timeoutMs", "until", "held", "startedAt", "request", "match", "extra");
/** A plain wait with none, one or two of its fields set to an edge value. */
const waitItem = fc
  .tuple(plainItem, fc.array(fc.tuple(field, fc.constantFrom(...edges)), { maxLength: 2 }))
  .map(([item, changes]) => {
    const out: Record<string, unknown> = { ...item };
    for (const [k, v] of changes) out[k] = v;
    return out;
  });
const outcome = fc.record(
  {
    id: fc.oneof(fc.string(), fc.string(), fc.string(), fc.integer()),
    kind: fc.constantFrom("wait", "wait", "wait", "sleep"),
    waits: fc.oneof(fc.array(waitItem, { minLength: 1, maxLength: 4 }), fc.array(waitItem, { maxLength: 4 }), fc.constant("no")),
    start: fc.oneof(fc.record({ at: int(0, 2 ** 40), seed: fc.string({ maxLength: 64 }) }), fc.record({ at: int(0, 2 ** 40), seed: fc.string({ maxLength: 64 }) }), fc.record({ at: int(0, 2 ** 40), seed: fc.string({ maxLength: 64 }) }), fc.record({ at: fc.constantFrom(...edges), seed: fc.string({ maxLength: 70 }) })),
  },
  { requiredKeys: ["kind"] },
);

describe("readOutcome, a wait", () => {
  it("reads any input exactly as WaitItemSchema does", () => {
    fc.assert(
      fc.property(outcome, (item) => {
        const read = readOutcome(item);
        const expected = bySchema(item);
        if (expected === null) {
          // Not a wait the schema takes: null, or (a sleep) read by the outcome schema as something else.
          if (item.kind === "wait") expect(read).toBeNull();
          return;
        }
        expect(read).toEqual(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it("reads a plain wait with any one field at any edge exactly as the schema does", () => {
    const base = { seq: 3, kind: "invoke", name: "item-3", startedAt: 5, request: { type: "t", payload: {} } };
    for (const k of ["seq", "kind", "name", "timeoutMs", "until", "held", "startedAt", "request", "match", "extra"]) {
      for (const v of edges) {
        const item = { id: "j", kind: "wait", waits: [{ ...base, [k]: v }], start: { at: 1, seed: "s" } };
        const expected = bySchema(item);
        expect(readOutcome(item), `${k}: ${String(v)}`).toEqual(expected);
      }
    }
  });

  it("reads a 1,000-invoke fan-out's waits, and refuses one past WAITS_MAX", () => {
    const waits = Array.from({ length: 1000 }, (_, i) => ({ seq: i, kind: "invoke", name: `item-${i}`, startedAt: 5, request: { type: "t", payload: { i } } }));
    const read = readOutcome({ id: "j", kind: "wait", waits, start: { at: 1, seed: "s" } });
    expect(read).toEqual({ id: "j", outcome: { kind: "wait", waits, start: { at: 1, seed: "s" } } });
    const many = Array.from({ length: WAITS_MAX + 1 }, (_, i) => ({ ...waits[0], seq: i }));
    expect(readOutcome({ id: "j", kind: "wait", waits: many, start: { at: 1, seed: "s" } })).toBeNull();
  });
});
