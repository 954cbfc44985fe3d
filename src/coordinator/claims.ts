/**
 * Claims: a pull worker's claim — served fairly across homes from the catalog's pick, waiting for due
 * work when asked — and inline claims, a caller's enqueue under a key leased to it in the same
 * transaction (docs/design.md "Pull claims", docs/producers.md "Inline claims"). No SQL here.
 *
 * @module
 */
import { requireDeclared } from "../config/known-types";
import { guarded } from "../pool/permit-plan";
import { QueueError } from "../errors";
import { homeFor } from "../job/home";
import { checkJsonSize } from "../job/json-size";
import type { ClaimKeyRequest, ClaimOrEnqueueRequest, ClaimOrEnqueueResult, ClaimRequest, CompleteManyResult, LeasedJob } from "../job/schemas";
import { prepareJob } from "../scope/api";
import type { Leases } from "./leases";
import type { QueueContext } from "./queue-context";
import { invalidField } from "./refusals";

/** Homes asked in parallel by one claim wave. */
const CLAIM_WAVE = 8;
/** Fallback homes a claim asks the catalog for beyond its limit, in case a summary is stale. */
const CLAIM_SPARE_HOMES = 3;

export class Claims {
  constructor(
    private readonly q: QueueContext,
    private readonly leases: Leases,
  ) {}

  /**
   * claim serves homes fairly: first those the catalog ranks (the one that has
   * waited longest first), then the type objects of the types asked for, which
   * the catalog may not know yet (new work is visible at once). Homes are asked
   * in waves, each given a share of what is still wanted, so the total never
   * exceeds `limit`.
   */
  async claim(req: ClaimRequest): Promise<LeasedJob[]> {
    // Notices from the moment the claim began count: work that came due while the first pass was on its way is not missed.
    const started = Date.now() - 1;
    const jobs = await this.claimNow(req);
    if (jobs.length > 0 || !req.waitMs || !req.types) return jobs;
    // Nothing due: park on the types' wait objects until a scope object says one has due work (claim-wait/wait-do.ts).
    // Parked, the claim costs the queue nothing per second: no catalog write, no alarm, a promise in memory.
    const types = [...new Set(req.types)];
    const deadline = started + req.waitMs;
    // Per type: the last notice acted on, by that wait object's clock (one type's notices never hide another's).
    const since = new Map(types.map((t) => [t, started]));
    for (let left = req.waitMs; left > 0; left = deadline - Date.now()) {
      const woke = await Promise.race(types.map(async (t) => ({ type: t, ...(await this.q.env.WAIT.getByName(`wait:${t}`).wait(left, since.get(t)!)) })));
      if (woke.homes.length === 0) return [];
      since.set(woke.type, woke.at);
      const got = await this.claimFrom(woke.homes, { worker: req.worker, types, limit: req.limit, leaseMs: req.leaseMs, ...(req.tags ? { tags: req.tags } : {}) });
      if (got.length > 0) return got;
    }
    return [];
  }

  /**
   * claimAfterCompleting: a pull worker's complete and next claim in one request (POST /v1/claim with
   * `complete`; BullMQ's worker likewise fetches its next job as it finishes one). The completions land first,
   * each answered as completeMany answers it; then the claim, which does not wait, so the answers are not held
   * back for a wait's length. A claim the queue would refuse is refused before any completion is written.
   */
  async claimAfterCompleting(req: ClaimRequest): Promise<{ jobs: LeasedJob[]; completed?: CompleteManyResult["results"]; askedAt: number; answeredAt: number }> {
    // askedAt: the queue's clock as the claim arrived, so a worker can place each lease's start on its own clock —
    // its send time plus (startedAt − askedAt), never earlier — even after a claim that waited (pull-worker/claims.ts).
    const askedAt = Date.now();
    if (!req.complete) return { jobs: await this.claim(req), askedAt, answeredAt: Date.now() };
    this.checkClaimTypes(req);
    const completed = await this.leases.completeMany(req.complete);
    return { jobs: await this.claim({ ...req, waitMs: undefined }), completed, askedAt, answeredAt: Date.now() };
  }

  /** claimFrom: claim from these homes directly (the ones a wait object named), one after another until `limit`. */
  private async claimFrom(homes: string[], req: { worker: string; types: string[]; limit: number; leaseMs: number; tags?: string[] }): Promise<LeasedJob[]> {
    const jobs: LeasedJob[] = [];
    for (const home of homes) {
      if (jobs.length >= req.limit) break;
      try {
        jobs.push(...(await this.q.scope(home).claim({ ...req, limit: req.limit - jobs.length })));
      } catch (e) {
        // Jobs leased by the homes that answered must reach the worker (as in claimNow): a failing home is skipped.
        console.error(JSON.stringify({ event: "claim:home_failed", failures: [{ home, error: String(e) }] }));
      }
    }
    return jobs;
  }

  /** checkClaimTypes: a claim names only declared, pulled types; refused before anything is written. */
  private checkClaimTypes(req: ClaimRequest): void {
    requireDeclared(this.q.config, req.types ?? [], (i) => `types[${i}]`);
    req.types?.forEach((t, i) => {
      if (this.q.config.pushTypes.includes(t)) throw invalidField(`types[${i}]`, `job type ${t} is pushed to its handler binding; it cannot be claimed by a pull worker`);
    });
  }

  private async claimNow(req: ClaimRequest): Promise<LeasedJob[]> {
    const { config } = this.q;
    const types = req.types ? [...new Set(req.types)] : null;
    this.checkClaimTypes(req);
    // Without types, pushed types' objects are never asked: their jobs belong to the handler.
    const pushTypes = config.pushTypes;
    const picked = await this.q.catalog().pickHomes(types, types ? [] : [...pushTypes], req.limit, CLAIM_SPARE_HOMES);
    const direct = (types ?? Object.keys(config.types).filter((t) => !pushTypes.includes(t))).flatMap((t) => this.q.typeHomes(t));
    const candidates = [...new Set([...picked, ...direct])];
    const jobs: LeasedJob[] = [];
    const failures: { home: string; error: string }[] = [];
    for (let i = 0; i < candidates.length && jobs.length < req.limit; ) {
      const remaining = req.limit - jobs.length;
      const wave = candidates.slice(i, i + Math.min(remaining, CLAIM_WAVE));
      i += wave.length;
      const settled = await Promise.allSettled(
        wave.map((home, k) =>
          this.q.scope(home).claim({ worker: req.worker, types, limit: share(remaining, wave.length, k), leaseMs: req.leaseMs, ...(req.tags ? { tags: req.tags } : {}) }),
        ),
      );
      // Jobs leased by the homes that answered must reach the worker even if another home failed:
      // dropping them would strand them until their lease expires, spending an attempt.
      for (const [k, s] of settled.entries()) {
        if (s.status === "fulfilled") jobs.push(...s.value);
        else failures.push({ home: wave[k]!, error: String(s.reason) });
      }
    }
    if (failures.length > 0) {
      console.error(JSON.stringify({ event: "claim:home_failed", failures }));
      if (jobs.length === 0) throw new Error(`claim failed in ${failures.length} object(s): ${failures[0]!.error}`);
    }
    return jobs;
  }

  // ------------------------------------------------------------ inline claims

  async claimOrEnqueue(req: ClaimOrEnqueueRequest): Promise<ClaimOrEnqueueResult> {
    const { config } = this.q;
    const body = { ...req.job, dedupeMode: "pending" as const };
    this.requirePulled(body.type, "job.type");
    const payload = JSON.stringify(body.payload);
    checkJsonSize(payload, config.limits.payloadMaxBytes, "job.payload");
    requireDeclared(config, [body.type], () => "job.type");
    this.q.checkCallbacks([body], () => "job.callback");
    const { home, job } = prepareJob(config, body, payload, Date.now());
    const out = await this.q.scope(home).claimOrEnqueue(job, req.worker, req.leaseMs);
    if (!out.ok && out.code === "queue_full") throw new QueueError("queue_full", `job.type: ${out.message}`, { path: "job.type" });
    if (!out.ok) throw new QueueError("conflict", `job.dedupeKey: ${out.message}`, { path: "job.dedupeKey" });
    return { leased: out.leased, job: out.job, created: out.created };
  }

  async claimKey(req: ClaimKeyRequest): Promise<LeasedJob | null> {
    this.requirePulled(req.type, "type");
    const home = homeFor({ type: req.type, scope: req.scope, dedupeKey: req.dedupeKey, localId: "" }, this.q.config.typeSettings(req.type).shards).name;
    return this.q.scope(home).claimKey(req.type, req.dedupeKey, req.worker, req.leaseMs);
  }

  /**
   * requirePulled: inline claims run in the caller; a pushed type's jobs belong to its handler. A guarded type's
   * claim must take permits first, which the one-transaction inline claim cannot wait for: a worker claims those.
   */
  private requirePulled(type: string, path: string): void {
    const { config } = this.q;
    if (config.pushTypes.includes(type)) throw invalidField(path, `job type ${type} is pushed to its handler binding; it cannot be claimed by a caller`);
    if (guarded(config, type) || config.typeSettings(type).waitsFor.length > 0) {
      throw invalidField(path, `job type ${type} is guarded (concurrency, pools, notWhileRunning or waitsFor); enqueue it and claim it with a worker instead`);
    }
  }
}

/** share: split `total` over `n` homes as evenly as integers allow (the first get the remainder). */
function share(total: number, n: number, k: number): number {
  return Math.floor(total / n) + (k < total % n ? 1 : 0);
}
