/**
 * The values in a scope object's RPC calls, sealed on their way in and opened on their way out, in the caller — the
 * coordinator, on the platform's native AES-GCM — so the object, whose CPU is the queue's ceiling, neither seals nor
 * opens what passes through it (sealing/lens.ts; docs/operating.md "Encryption at rest"). The object still seals
 * what reaches it unsealed (its writes call the vault, which leaves a sealed value as it is), so a caller without a
 * lens stores nothing in the clear either.
 *
 * Which argument of which method carries a value is listed here, beside the one rule for answers: every sealed
 * value in an answer is opened, for a handler in a claim (where one that does not open fails its job alone) and
 * for a reader everywhere else.
 *
 * @module
 */
import type { Lens } from "./lens";

type Args = unknown[];
type Seal = (json: string) => Promise<string>;

const jobsAt = (i: number) => async (args: Args, seal: Seal) => {
  args[i] = await Promise.all((args[i] as { payload: string }[]).map(async (j) => ({ ...j, payload: await seal(j.payload) })));
};
const textAt = (i: number) => async (args: Args, seal: Seal) => {
  if (typeof args[i] === "string") args[i] = await seal(args[i] as string);
};

/** The arguments that carry values, by method (scope/scope-do.ts). Log lines are sealed by the object, after it clips them. */
const SEALED_ARGS: Record<string, (args: Args, seal: Seal) => Promise<void>> = {
  enqueue: jobsAt(0),
  stageBatch: jobsAt(2),
  commitDecidingBatch: jobsAt(1),
  claimOrEnqueue: async (args, seal) => {
    const job = args[0] as { payload: string };
    args[0] = { ...job, payload: await seal(job.payload) };
  },
  complete: textAt(2),
  completeMany: async (args, seal) => {
    args[0] = await Promise.all((args[0] as { result: string | null }[]).map(async (i) => (i.result === null ? i : { ...i, result: await seal(i.result) })));
  },
  appendStep: async (args, seal) => {
    const w = args[0] as { op: string; result: string | null };
    if (w.op === "commit" && w.result !== null) args[0] = { ...w, result: await seal(w.result) };
  },
  signal: textAt(2),
  signalKey: textAt(3),
  completeToken: textAt(1),
  resolveStep: textAt(2),
  rerun: textAt(2),
};

/** sealArgs: a call's arguments with the values they carry sealed (a copy where one is; the call's own otherwise). */
export async function sealArgs(lens: Lens, method: string, args: Args): Promise<Args> {
  const seal = SEALED_ARGS[method];
  if (!seal || !lens.vault.on) return args;
  const out = [...args];
  await seal(out, (json) => lens.vault.sealTextAsync(json));
  return out;
}

type Leased = { id: string; leaseToken: string };
/** failJob: a claimed job whose values do not open fails at once (retrying cannot open them); false when it could not. */
export type FailJob = (job: Leased, error: string) => Promise<unknown>;

/** openAnswer: a call's answer with its sealed values opened — a claim's for its handler, any other for a reader. */
export async function openAnswer(lens: Lens, method: string, answer: unknown, failJob: FailJob): Promise<unknown> {
  if (answer === null || typeof answer !== "object") return answer;
  switch (method) {
    case "claim":
      return (await Promise.all((answer as Leased[]).map((j) => openLeased(lens, j, failJob)))).filter((j) => j !== null);
    case "claimKey":
      return openLeased(lens, answer as Leased, failJob);
    case "claimOrEnqueue": {
      const a = answer as { ok: boolean; job?: unknown; leased?: Leased | null };
      if (!a.ok) return answer;
      return { ...a, job: await lens.openDeep(a.job, "reader"), leased: a.leased ? await openLeased(lens, a.leased, failJob) : null };
    }
    case "appendStep": {
      // A pull worker's write: its answer's `result` is its own (a wait token), the job a reader's view.
      const a = answer as { ok: boolean; job?: unknown };
      return a.ok ? { ...a, job: await lens.openDeep(a.job, "reader") } : answer;
    }
    default:
      return lens.openDeep(answer, "reader");
  }
}

async function openLeased(lens: Lens, job: Leased, failJob: FailJob): Promise<Leased | null> {
  try {
    return await lens.openDeep(job, "handler");
  } catch (e) {
    await failJob(job, `its values could not be opened for its handler: ${String(e)}`);
    return null;
  }
}
