/**
 * The handler side of durable steps (docs/handlers.md "Durable steps"): positions,
 * replay from the journal the job arrived with, writes before a step returns,
 * sleep, and the deterministic `now()` / `uuid()`. Runs anywhere (no Workers
 * import), so `edgequeue/testing` drives the same code over an in-memory
 * journal.
 *
 * @module
 */
import type { Journal, JournalAnswer, JournalEntry, JournalKind, JournalStart, JournalWrite, WaitItem } from "../job/handler-contract";
import type { EventWaitOptions, InvokeRequest, StepOptions, StepRun, WaitedEvent, WaitOptions, WaitToken } from "./context";
import { ChildJobFailedError, JobAbortedError, NondeterminismError, TerminalJobError } from "./errors";
import { randomHex } from "../random-hex";
import { fnv128Hex } from "../job/derived-id";

/** Where a running attempt's journal writes go: the batch's control (pushed), the HTTP API (pull), memory (tests). */
export interface JournalWriter {
  write(w: Omit<JournalWrite, "id">): Promise<JournalAnswer>;
}

/**
 * Thrown by `ctx.sleep` to end the attempt (the SDK turns it into a `sleep` outcome). A first sleep says how long
 * (`durationMs`): the queue's object reckons the wake time on its own clock, not the handler's. A replayed one
 * says null: its wake time is in the journal already, and `until` repeats it.
 */
export class SleepRequest extends Error {
  override readonly name = "SleepRequest";
  constructor(readonly sleep: { name: string; seq: number; until: number; durationMs: number | null; startedAt: number; start: JournalStart }) {
    super(`sleeping until ${new Date(sleep.until).toISOString()} (ctx.sleep ${JSON.stringify(sleep.name)}); do not catch this`);
  }
}

const WAIT_WORDS = { signal: "signal", token_wait: "wait token", invoke: "child job", event: "an event on" } as const;

/**
 * Thrown by `ctx.waitForSignal` / `ctx.waitForToken` to end the attempt (the SDK turns the attempt's waits into a
 * `wait` outcome: docs/workflows.md). Waits made in one moment (`Promise.all`) all end up in the outcome.
 */
export class WaitRequest extends Error {
  override readonly name = "WaitRequest";
  constructor(readonly wait: WaitItem) {
    super(`waiting for ${WAIT_WORDS[wait.kind]} ${JSON.stringify(wait.name)}; do not catch this`);
  }
}

/**
 * Thrown after a step whose journal answer says the job was asked to pause (POST /v1/jobs/{id}/pause): the step's
 * result is journaled, the attempt ends there unspent, and the job waits paused until resumed (scope/jobs/job-pause.ts).
 */
export class PauseRequest extends Error {
  override readonly name = "PauseRequest";
  constructor(step: string) {
    super(`pausing after step ${JSON.stringify(step)}: the job was asked to pause; do not catch this`);
  }
}

export interface StepJob {
  id: string;
  attempt: number;
  /** The queue's clock when this attempt was dispatched: a journaled sleep due by then is over. */
  dispatchedAt: number;
}

export class StepRunner {
  private nextSeq = 0;
  private readonly entries = new Map<number, JournalEntry>();
  /** The last position the journal holds (-1: none): the handler replays until it calls past it. */
  private readonly lastHeld: number;
  private readonly start: JournalStart;
  /** A sleep asked for (a handler that caught the SleepRequest still sleeps). */
  sleeping: SleepRequest | null = null;
  /** The pause asked for by the queue after a step (a handler that caught the PauseRequest still pauses, unless it completes). */
  pausing: PauseRequest | null = null;
  /** The waits asked for, in call order (a handler that caught a WaitRequest still waits). */
  readonly waits: WaitItem[] = [];
  /**
   * Whether a WaitRequest has reached the handler. An error the handler throws before that is its own — a replayed
   * child's failure out of `Promise.all`, say — and fails the attempt even though it asked for waits; one after may
   * be the wait's unwinding (a catch that wraps it), and the attempt ends on its waits.
   */
  delivered = false;
  /** The open waits of this moment, rejected together a few ticks after the first (deliverWaits). */
  private undelivered: (() => void)[] = [];

  constructor(
    private readonly job: StepJob,
    journal: Journal | undefined,
    private readonly writer: JournalWriter,
    private readonly signal: AbortSignal,
    private readonly clock: () => number = Date.now,
    random: () => string = randomSeed,
  ) {
    let last = -1;
    for (const e of journal?.entries ?? []) {
      this.entries.set(e.seq, e);
      last = Math.max(last, e.seq);
    }
    this.lastHeld = last;
    this.start = journal?.start ?? { at: clock(), seed: random() };
  }

  /**
   * Whether the handler is replaying: its next step call is one the journal holds (a step, sleep, wait, token or
   * invoke at that position), so what it does now an earlier attempt did before it journaled that call. It stops at
   * the first call past the journal. What ctx.log says meanwhile was said, and kept, by that attempt
   * (docs/handlers.md "Logs kept with the job").
   */
  get replaying(): boolean {
    return this.nextSeq <= this.lastHeld;
  }

  now(): number {
    return this.start.at;
  }

  /** The start record a wait outcome carries (persisted with the job's first journal write). */
  startRecord(): JournalStart {
    return this.start;
  }

  uuid(label: string): string {
    return derivedUuid(`${this.job.id}\u0000${this.start.seed}\u0000${label}`);
  }

  async step<R>(name: string, fn: (run: StepRun) => R | Promise<R>, options: StepOptions = {}): Promise<Awaited<R>> {
    const seq = this.nextSeq++;
    checkName(name);
    const held = this.entries.get(seq);
    if (held) {
      if (held.name !== name || held.kind !== "step") throw mismatch(seq, held, name, "step");
      if (held.finishedAt !== null) return JSON.parse(held.result ?? "null") as Awaited<R>;
      if (options.atMostOnce) {
        throw new TerminalJobError(
          `step ${JSON.stringify(name)} is atMostOnce: it started in attempt ${held.attempt} and never journaled a result, so it is not run again. ` +
            `Resolve it (POST /v1/jobs/${this.job.id}/steps/${encodeURIComponent(name)}/resolve {"result": …}) or retry the job to run it again.`,
        );
      }
    }
    if (this.signal.aborted) throw this.signal.reason;
    const startedAt = this.clock();
    if (options.atMostOnce) await this.write({ op: "begin", seq, name, result: null, startedAt });
    const timeout = options.timeoutMs === undefined ? null : AbortSignal.timeout(options.timeoutMs);
    const signal = timeout === null ? this.signal : AbortSignal.any([this.signal, timeout]);
    const value = await withTimeout(Promise.resolve().then(() => fn({ idempotencyKey: options.idempotencyKey ?? `${this.job.id}:${name}`, signal })), timeout, options.timeoutMs, name);
    let result: string;
    try {
      result = JSON.stringify(value ?? null) ?? "null";
    } catch (e) {
      throw new TerminalJobError(`step ${JSON.stringify(name)}: its result is not JSON-serializable: ${String(e)}`);
    }
    const answer = await this.write({ op: "commit", seq, name, result, startedAt, ...(options.sensitive ? { sensitive: true } : {}) });
    if (answer.paused) throw (this.pausing = new PauseRequest(name));
    // Returned through JSON on the first run too, so a replay returns exactly what the first run did.
    return JSON.parse(result) as Awaited<R>;
  }

  /**
   * patched: whether this job runs the patched path (docs/deploy.md "Code that changes under running jobs"): true for
   * a job that first reaches this point on code that has the patch — its journal ends before it, so the patch is
   * journaled here and a replay answers the same —, false for one whose journal went on past this point before the
   * patch existed (it keeps to its old path: the position is not taken, its old steps replay where they were).
   */
  async patched(name: string): Promise<boolean> {
    checkName(name);
    const seq = this.nextSeq;
    const held = this.entries.get(seq);
    if (held?.kind === "patch" && held.name === name) {
      this.nextSeq++;
      return true;
    }
    if (held || seq <= this.lastHeld) return false;
    if (this.signal.aborted) throw this.signal.reason;
    this.nextSeq++;
    await this.write({ op: "patch", seq, name, result: "true", startedAt: this.clock() });
    return true;
  }

  async sleep(name: string, ms: number): Promise<void> {
    const seq = this.nextSeq++;
    checkName(name);
    if (!Number.isFinite(ms) || ms < 0) throw new TypeError(`ctx.sleep(${JSON.stringify(name)}, ms): ms must be a number ≥ 0, got ${String(ms)}`);
    const held = this.entries.get(seq);
    if (held) {
      if (held.name !== name || held.kind !== "sleep") throw mismatch(seq, held, name, "sleep");
      if ((held.wakeAt ?? 0) <= this.job.dispatchedAt) return;
      this.sleeping = new SleepRequest({ name, seq, until: held.wakeAt!, durationMs: null, startedAt: held.startedAt, start: this.start });
      throw this.sleeping;
    }
    const now = this.clock();
    this.sleeping = new SleepRequest({ name, seq, until: now + Math.round(ms), durationMs: Math.round(ms), startedAt: now, start: this.start });
    throw this.sleeping;
  }

  /** waitForSignal: the signal's `{ data }` once it is sent to the job (by id, or to its key), or null at the timeout. */
  async waitForSignal<T = unknown>(name: string, options: WaitOptions = {}): Promise<{ data: T } | null> {
    const seq = this.nextSeq++;
    checkName(name);
    const timeoutMs = checkTimeout(options.timeoutMs, `ctx.waitForSignal(${JSON.stringify(name)})`);
    return this.waitAt(seq, "signal", name, { timeoutMs });
  }

  /**
   * createWaitToken: a token a person or a webhook completes by POSTing to its path, with no queue token. Made and
   * signed by the queue (a journal write), the same token on every attempt.
   */
  async createWaitToken(name: string, options: WaitOptions = {}): Promise<WaitToken> {
    const seq = this.nextSeq++;
    checkName(name);
    const timeoutMs = checkTimeout(options.timeoutMs, `ctx.createWaitToken(${JSON.stringify(name)})`);
    const held = this.entries.get(seq);
    if (held) {
      if (held.name !== name || held.kind !== "token") throw mismatch(seq, held, name, "token");
      return JSON.parse(held.result ?? "null") as WaitToken;
    }
    if (this.signal.aborted) throw this.signal.reason;
    const { result } = await this.write({ op: "token", seq, name, result: JSON.stringify({ timeoutMs }), startedAt: this.clock() });
    if (result === undefined) throw new TerminalJobError(`ctx.createWaitToken(${JSON.stringify(name)}): the queue answered no token (a queue older than wait tokens)`);
    return JSON.parse(result) as WaitToken;
  }

  /** waitForToken: the `{ data }` POSTed to the token's path, or null once the token expires. */
  async waitForToken<T = unknown>(token: WaitToken): Promise<{ data: T } | null> {
    const seq = this.nextSeq++;
    if (typeof token !== "object" || token === null || typeof token.name !== "string") throw new TypeError("ctx.waitForToken(token): pass the token ctx.createWaitToken returned");
    return this.waitAt(seq, "token_wait", token.name, { until: token.expiresAt });
  }

  /**
   * waitForEvent: the first event emitted to `topic` after the queue heard of the wait whose payload has every
   * field of `match` with its value; null once `timeoutMs` passes.
   */
  async waitForEvent<P>(topic: string, options: EventWaitOptions = {}): Promise<WaitedEvent<P> | null> {
    const seq = this.nextSeq++;
    checkName(topic);
    const call = `ctx.waitForEvent(${JSON.stringify(topic)})`;
    const timeoutMs = checkTimeout(options.timeoutMs, call);
    const match = options.match ?? {};
    if (typeof match !== "object" || match === null || Array.isArray(match)) throw new TypeError(`${call}: match is an object of payload fields and the values they must have`);
    const held = this.entries.get(seq);
    if (!held) return this.waitOn({ seq, kind: "event", name: topic, match, timeoutMs, startedAt: this.clock() });
    if (held.name !== topic || held.kind !== "event") throw mismatch(seq, held, topic, "event");
    if (held.finishedAt !== null) return JSON.parse(held.result ?? "null") as WaitedEvent<P> | null;
    return this.waitOn({ seq, kind: "event", name: topic, held: true, startedAt: held.startedAt });
  }

  /** invoke: the child's result once it completes; ChildJobFailedError when it ends otherwise. */
  async invoke<R>(name: string, request: InvokeRequest): Promise<R> {
    const seq = this.nextSeq++;
    checkName(name);
    if (typeof request !== "object" || request === null || typeof request.type !== "string") {
      throw new TypeError(`ctx.invoke(${JSON.stringify(name)}, request): request is { type, payload, ... } as an enqueue takes it`);
    }
    const held = this.entries.get(seq);
    if (!held) return this.waitOn({ seq, kind: "invoke", name, request, startedAt: this.clock() });
    if (held.name !== name || held.kind !== "invoke") throw mismatch(seq, held, name, "invoke");
    if (held.finishedAt === null) return this.waitOn({ seq, kind: "invoke", name, held: true, startedAt: held.startedAt });
    const end = JSON.parse(held.result ?? "null") as { child: string; state: string; result: unknown; error?: string | null; failureKind?: string | null };
    if (end.state !== "completed") throw new ChildJobFailedError(end.child, name, end.state, end.error ?? null, end.failureKind ?? null);
    return end.result as R;
  }

  /**
   * waitAt: the wait at `seq` — its answer when the journal holds it ended; else the attempt ends on it, held open
   * (its timeout stands) or new (`fresh` says its timeout).
   */
  private waitAt<T>(seq: number, kind: WaitItem["kind"], name: string, fresh: Pick<WaitItem, "timeoutMs" | "until">): Promise<{ data: T } | null> {
    const held = this.entries.get(seq);
    if (!held) return this.waitOn({ seq, kind, name, ...fresh, startedAt: this.clock() });
    if (held.name !== name || held.kind !== kind) throw mismatch(seq, held, name, kind);
    if (held.finishedAt !== null) return Promise.resolve(JSON.parse(held.result ?? "null") as { data: T } | null);
    return this.waitOn({ seq, kind, name, held: true, startedAt: held.startedAt });
  }

  /** waitOn: the attempt ends on this wait (with any others asked for in the same moment). */
  private waitOn(w: WaitItem): Promise<never> {
    this.waits.push(w);
    // No stack: nothing reads it (the SDK turns the waits into the outcome), and a fan-out of 1,000 invokes made
    // 1,000 of them, a tenth of its first attempt.
    const errors = Error as { stackTraceLimit?: number };
    const limit = errors.stackTraceLimit;
    errors.stackTraceLimit = 0;
    let request: WaitRequest;
    try {
      request = new WaitRequest(w);
    } finally {
      errors.stackTraceLimit = limit;
    }
    // Rejected a few ticks later, with the others of its moment: what the replay answers at once — a child's failure,
    // a wait that ended — settles first, so Promise.all over an open invoke and a failed one throws the failure, which
    // the handler may catch (docs/workflows.md "Child jobs"). Ticks, not a timer: a test's fake timers must not hold it.
    const p = new Promise<never>((_, reject) => {
      if (this.undelivered.push(() => reject(request)) === 1) void afterTicks(WAIT_DELIVERY_TICKS).then(() => this.deliverWaits());
    });
    // Handled here too: a wait the handler never awaits (the attempt ended on another) is no unhandled rejection.
    p.catch(() => undefined);
    return p;
  }

  private deliverWaits(): void {
    const now = this.undelivered;
    this.undelivered = [];
    this.delivered = true;
    for (const reject of now) reject();
  }

  private async write(w: Omit<JournalWrite, "id" | "start">): Promise<{ result?: string; paused?: true }> {
    const answer = await this.writer.write({ ...w, start: this.start });
    if (answer.ok) return answer;
    if (answer.code === "nondeterminism") throw new NondeterminismError(answer.message);
    if (answer.code === "payload_too_large" || answer.code === "journal_too_large" || answer.code === "refused") throw new TerminalJobError(answer.message);
    // Deposed: another attempt holds the job, or none does. Nothing this attempt does counts any more.
    throw new JobAbortedError("lease_lost");
  }
}

/**
 * Microtask ticks between a moment's first open wait and its rejection: past the few a replayed failure takes to
 * reach the handler's `await` through Promise.all and a layer or two of the handler's own async functions. A failure
 * nested deeper arrives after the wait and the attempt ends on its waits, as it always did.
 */
const WAIT_DELIVERY_TICKS = 16;

async function afterTicks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await undefined;
}

function checkName(name: string): void {
  if (typeof name !== "string" || name.length === 0 || name.length > 256) throw new TypeError(`a step name is a string of 1-256 characters, got ${JSON.stringify(name)}`);
}

/** checkTimeout: a wait's timeoutMs — a whole number of ms ≥ 0 (fractions rounded), or none. */
function checkTimeout(ms: number | undefined | null, call: string): number | null {
  if (ms === undefined || ms === null) return null;
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) throw new TypeError(`${call}: timeoutMs must be a number ≥ 0, got ${String(ms)}`);
  return Math.round(ms);
}

function mismatch(seq: number, held: JournalEntry, name: string, kind: JournalKind): NondeterminismError {
  return new NondeterminismError(
    `step ${seq} is ${held.kind} ${JSON.stringify(held.name)} in the journal, but the code now calls ${kind} ${JSON.stringify(name)} there: the handler changed under a job that had started`,
  );
}

/** withTimeout: the step's answer, unless its timeout passed first — even if the function then answered (it was told to stop). */
async function withTimeout<T>(p: Promise<T>, timeout: AbortSignal | null, ms: number | undefined, name: string): Promise<T> {
  if (timeout === null) return p;
  const late = () => new Error(`step ${JSON.stringify(name)} timed out after ${ms} ms`);
  const expired = new Promise<never>((_, reject) => {
    if (timeout.aborted) reject(late());
    timeout.addEventListener("abort", () => reject(late()), { once: true });
  });
  expired.catch(() => undefined);
  const value = await Promise.race([p, expired]);
  if (timeout.aborted) throw late();
  return value;
}

function randomSeed(): string {
  return randomHex(16);
}

/** derivedUuid: fnv128Hex (job/derived-id.ts) laid out as an RFC 9562 version 8 (custom) UUID. */
function derivedUuid(input: string): string {
  const hex = fnv128Hex(input).split("");
  hex[12] = "8";
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
