/**
 * A batch enqueue over several objects, all or none: stage every part but the
 * decider's, let the decider enqueue its own part and record the outcome in
 * one transaction, then commit or drop every other part (the protocol, and how
 * an object settles a stage whose coordinator died, are in
 * scope/batches/batch-stage.ts; docs/design.md "Batches over several objects").
 *
 * @module
 */
import { QueueError } from "../errors";
import type { Decision, EnqueueRefusal, NewJob, Publication, WireDecidingAnswer as DecidingAnswer, WireEnqueueOutcome as EnqueueOutcome } from "../scope/api";

/** What a part's object offers (ScopeDO's methods, over RPC). */
interface StagingObject {
  stageBatch(batch: string, decider: string, jobs: NewJob[]): Promise<EnqueueRefusal | null>;
  commitDecidingBatch(batch: string, jobs: NewJob[], publication?: Publication): Promise<DecidingAnswer>;
  decideBatch(batch: string, proposal: Decision | null): Promise<Decision | null>;
  commitBatch(batch: string, ids: readonly string[]): Promise<EnqueueOutcome>;
  abortBatch(batch: string): Promise<void>;
}

interface Part {
  home: string;
  jobs: NewJob[];
}

/**
 * commitDeciding: the decider's own part and the commit, asked twice (a decision once recorded wins, and a
 * second call after a lost answer answers with the part's jobs as made). Unanswered, the outcome is unknown to
 * the caller: the parts will follow whatever the decider recorded, from their alarms.
 */
async function commitDeciding(decider: StagingObject, batch: string, jobs: NewJob[], publication?: Publication): Promise<DecidingAnswer> {
  try {
    return await decider.commitDecidingBatch(batch, jobs, publication);
  } catch {
    try {
      return await decider.commitDecidingBatch(batch, jobs, publication);
    } catch (e) {
      throw new QueueError(
        "internal",
        `the batch's outcome is unknown (its decider could not be reached: ${String(e)}); within 30 s it exists whole or not at all. ` +
          "Send it again with the same ids: the jobs it made are answered, not made twice.",
      );
    }
  }
}

/** A part refused by its object (a key under another mode, a full type): the batch wrote nothing. */
export class PartRefused extends Error {
  constructor(
    readonly part: number,
    readonly refusal: EnqueueRefusal,
  ) {
    super(refusal.message);
  }
}

/**
 * An event's deliveries are decided by its topic's registry (`home`, a part of its own, with no jobs or some): the
 * event is taken with the decision, so the deliveries exist exactly when the registry took it.
 */
export interface DecidedBy {
  home: string;
  publication: Publication;
}

/**
 * commitAcross: each part's enqueue answer, in part order, once the batch committed everywhere, and what the
 * decider's publication ended (`published`). Throws PartRefused (the first refused part in `parts` order) or a
 * QueueError when the batch could not commit; in both cases no job of it exists or ever will. `run` runs the
 * calls, a few at a time.
 */
export async function commitAcross(
  parts: readonly Part[],
  object: (home: string) => StagingObject,
  run: <T>(items: readonly T[], f: (item: T) => Promise<void>) => Promise<void>,
  decidedBy?: DecidedBy,
): Promise<{ answers: (EnqueueOutcome | null)[]; published: number | undefined }> {
  const batch = `b${Date.now().toString(36)}${crypto.randomUUID().replaceAll("-", "")}`;
  // The decider is one of the batch's own objects, so no other object is on the path; the first by name (or an
  // event's registry). Its own part is not staged: it is enqueued with the decision (2n - 1 calls for n objects, not
  // 2n + 1: fewer billed requests and stage writes; the rounds, and so the latency, stay three).
  if (decidedBy && !parts.some((p) => p.home === decidedBy.home)) parts = [...parts, { home: decidedBy.home, jobs: [] }];
  const decider = decidedBy?.home ?? [...parts].map((p) => p.home).sort()[0]!;
  const own = parts.findIndex((p) => p.home === decider);
  const others = parts.flatMap((p, i) => (i === own ? [] : [{ p, i }]));
  const staged: boolean[] = parts.map(() => false);
  const refusals: PartRefused[] = [];
  const failures: unknown[] = [];
  await run(others, async ({ p, i }) => {
    try {
      const refused = await object(p.home).stageBatch(batch, decider, p.jobs);
      if (refused) refusals.push(new PartRefused(i, refused));
      else staged[i] = true;
    } catch (e) {
      failures.push(e);
    }
  });
  let deciding: DecidingAnswer | null = null;
  if (refusals.length === 0 && failures.length === 0) {
    deciding = await commitDeciding(object(decider), batch, parts[own]!.jobs, decidedBy?.publication);
    if (deciding.decision === "abort" && deciding.refusal) refusals.push(new PartRefused(own, deciding.refusal));
  } else {
    // Best effort: a part this misses is dropped by its own alarm (its decider answers abort).
    await object(decider).decideBatch(batch, "abort").catch(() => undefined);
  }
  if (deciding?.decision !== "commit") {
    await run(others, async ({ p, i }) => {
      if (staged[i]) await object(p.home).abortBatch(batch).catch(() => undefined);
    });
    if (refusals.length > 0) throw refusals.sort((a, b) => a.part - b.part)[0]!;
    const why = failures.length > 0 ? String(failures[0]) : "its parts waited past the stage timeout";
    throw new QueueError("internal", `the batch was not enqueued (${why}); nothing of it was written: sending it again is safe`);
  }
  const answers: (EnqueueOutcome | null)[] = parts.map(() => null);
  answers[own] = deciding.outcome;
  const unreached: string[] = [];
  await run(others, async ({ p, i }) => {
    // Once decided, a part must commit: try twice, then leave it to its object's alarm (which asks the decider).
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        answers[i] = await object(p.home).commitBatch(batch, p.jobs.map((j) => j.id));
        return;
      } catch (e) {
        if (attempt === 1) {
          unreached.push(p.home);
          console.error(JSON.stringify({ event: "batch:commit_unreached", batch, home: p.home, error: String(e) }));
        }
      }
    }
  });
  if (unreached.length > 0) {
    throw new QueueError(
      "internal",
      `the batch committed, but ${unreached.length} of its objects could not be reached: each applies its part from its alarm (about a second after staging, once the object runs). ` +
        "Sending the batch again with the same ids answers with its jobs.",
    );
  }
  return { answers, published: deciding.published };
}
