/**
 * Reading a handler's answer. Whatever comes back over the binding is checked
 * here: a job with no valid outcome is retried (a malformed answer must not
 * lose a job or complete it by accident).
 *
 * @module
 */
import { z } from "zod";
import { jsonProblem, isJsonObject, type JsonObject } from "../job/json-safe";
import { ERROR_MAX_CHARS } from "../job/schemas";
import { readLogLines } from "../job/log-lines";
import type { HandlerOutcome, WaitItem } from "../job/handler-contract";

/** A reported code version longer than this is dropped (a Worker version's id is 36 characters; job/schemas codeVersion). */
export const VERSION_MAX_CHARS = 100;

/** A snooze shorter than this would only spin the job (a snooze spends no attempt). */
export const SNOOZE_MIN_MS = 250;
/** Durations in whole milliseconds, within a year; fractions are rounded rather than refused (the handler's intent survives). */
const ms = z.number().min(0).max(366 * 86_400_000).transform(Math.round);

/** Waits one attempt may end on (a fan-out of ctx.invoke is one per child). */
export const WAITS_MAX = 5000;

/** One wait of a `wait` outcome (job/handler-contract.ts WaitItem). */
export const WaitItemSchema = z.object({
  seq: z.number().int().min(0).max(100_000),
  kind: z.enum(["signal", "token_wait", "invoke", "event"]),
  name: z.string().min(1).max(256),
  timeoutMs: ms.nullable().optional(),
  until: z.number().int().min(0).nullable().optional(),
  held: z.boolean().optional(),
  startedAt: z.number().int().min(0),
  // Checked by the job's object as an enqueue is (scope/workflow/invokes.ts), so its refusal names the field.
  request: z.unknown().optional(),
  match: z.record(z.string(), z.unknown()).optional(),
});

/** The first frame of the error's stack (job/error-group.ts): its error group; a handler of an older SDK sends none. */
const FRAME = z.string().max(200).optional();

const OutcomeSchema = z.discriminatedUnion("kind", [
  z.object({ id: z.string(), kind: z.literal("completed"), result: z.unknown().optional() }),
  z.object({
    id: z.string(),
    kind: z.literal("retry"),
    error: z.string(),
    retryAfterMs: ms.optional(),
    consumesAttempt: z.boolean().optional(),
    frame: FRAME,
  }),
  z.object({ id: z.string(), kind: z.literal("failed"), error: z.string(), frame: FRAME, nondeterminism: z.boolean().optional() }),
  z.object({ id: z.string(), kind: z.literal("snooze"), delayMs: ms.transform((d) => Math.max(d, SNOOZE_MIN_MS)) }),
  z.object({
    id: z.string(),
    kind: z.literal("sleep"),
    name: z.string().min(1).max(256),
    seq: z.number().int().min(0).max(100_000),
    until: z.number().int().min(0),
    durationMs: z.number().int().min(0).nullable().optional(),
    startedAt: z.number().int().min(0),
    start: z.object({ at: z.number().int().min(0), seed: z.string().max(64) }),
  }),
  z.object({
    id: z.string(),
    kind: z.literal("wait"),
    waits: z.array(WaitItemSchema).min(1).max(WAITS_MAX),
    start: z.object({ at: z.number().int().min(0), seed: z.string().max(64) }),
  }),
]);


/** A wait outcome's fields but its waits (plainWaits). */
const WaitOutcomeHead = z.object({ id: z.string(), kind: z.literal("wait"), start: z.object({ at: z.number().int().min(0), seed: z.string().max(64) }) });

/**
 * plainWaits: a wait outcome's waits when every one is of the plain shape — no duration to round, no match —
 * and checked as WaitItemSchema checks them, read without the schema: a fan-out of 1,000 invokes through it was
 * the largest part of reading its outcome (docs/design.md "Child jobs and failure handlers"). Null: any other
 * shape, which the schema reads (and refuses).
 */
function plainWaits(waits: unknown): WaitItem[] | null {
  if (!Array.isArray(waits) || waits.length < 1 || waits.length > WAITS_MAX) return null;
  const out: WaitItem[] = [];
  for (const v of waits) {
    if (typeof v !== "object" || v === null) return null;
    const { seq, kind, name, timeoutMs, until, held, startedAt, request, match } = v as Record<string, unknown>;
    if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0 || seq > 100_000) return null;
    if (kind !== "invoke" && kind !== "signal" && kind !== "token_wait" && kind !== "event") return null;
    if (typeof name !== "string" || name.length < 1 || name.length > 256) return null;
    if ((timeoutMs !== undefined && timeoutMs !== null) || match !== undefined) return null;
    if (until !== undefined && until !== null && !(typeof until === "number" && Number.isSafeInteger(until) && until >= 0)) return null;
    if (held !== undefined && typeof held !== "boolean") return null;
    if (typeof startedAt !== "number" || !Number.isSafeInteger(startedAt) || startedAt < 0) return null;
    const w: WaitItem = { seq, kind, name, startedAt };
    if (timeoutMs === null) w.timeoutMs = null;
    if (until !== undefined) w.until = until as number | null;
    if (held !== undefined) w.held = held;
    if (request !== undefined) w.request = request;
    out.push(w);
  }
  return out;
}

/** readWait: a wait outcome of plain waits, or null for the schema to read. */
function readWait(item: unknown): { id: string; kind: "wait"; waits: WaitItem[]; start: { at: number; seed: string } } | null {
  if ((item as { kind?: unknown } | null)?.kind !== "wait") return null;
  const waits = plainWaits((item as { waits?: unknown }).waits);
  const head = waits && WaitOutcomeHead.safeParse(item);
  return head?.success ? { ...head.data, waits: waits! } : null;
}

/** readOutcome: one outcome as the handler reported it, checked; null when it is not one. */
export function readOutcome(item: unknown): { id: string; outcome: HandlerOutcome } | null {
  const wait = readWait(item);
  if (wait) {
    const { id, ...outcome } = wait;
    return { id, outcome: withExtras(outcome, item) };
  }
  const parsed = OutcomeSchema.safeParse(item);
  if (!parsed.success) return null;
  const { id, ...outcome } = parsed.data;
  const read = outcome.kind === "completed" ? checkResult(outcome.result) : trimError(outcome);
  return { id, outcome: withExtras(read, item) };
}

/**
 * withExtras: the outcome with its lines and its code version (docs/deploy.md "Code that changes under running
 * jobs"), each read apart from the verdict: a malformed one is dropped, never the outcome.
 */
function withExtras(outcome: HandlerOutcome, item: unknown): HandlerOutcome {
  const logs = readLogLines((item as { logs?: unknown }).logs);
  const version = (item as { version?: unknown }).version;
  const withLogs = logs.length > 0 ? { ...outcome, logs } : outcome;
  return typeof version === "string" && version.length > 0 && version.length <= VERSION_MAX_CHARS ? { ...withLogs, version } : withLogs;
}

/** readOutcomes maps job id → outcome for the jobs sent; anything missing or malformed becomes a retry that says so. */
export function readOutcomes(ids: readonly string[], answer: unknown): Map<string, HandlerOutcome> {
  const out = new Map<string, HandlerOutcome>();
  const list = Array.isArray(answer) ? answer : [];
  for (const item of list) {
    const read = readOutcome(item);
    if (read && !out.has(read.id)) out.set(read.id, read.outcome);
  }
  for (const id of ids) {
    if (!out.has(id)) out.set(id, { kind: "retry", error: Array.isArray(answer) ? "handler returned no valid outcome for this job" : "handler returned a malformed answer" });
  }
  return out;
}

/** A result must be a JSON object (or nothing); a bad one fails the job for good — retrying would return it again. */
function checkResult(result: unknown): HandlerOutcome {
  if (result === undefined || result === null) return { kind: "completed", result: null };
  if (!isJsonObject(result)) return { kind: "failed", error: "handler result is not a JSON object" };
  const problem = jsonProblem(result);
  if (problem) return { kind: "failed", error: `handler result is not JSON at ${problem.path.join(".") || "(root)"}: ${problem.problem}` };
  return { kind: "completed", result: result as JsonObject };
}

function trimError<T extends HandlerOutcome>(o: T): T {
  return "error" in o && o.error.length > ERROR_MAX_CHARS ? { ...o, error: o.error.slice(0, ERROR_MAX_CHARS) } : o;
}
