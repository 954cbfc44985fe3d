/**
 * Jobs one at a time, and enqueue: each call routed to the object that owns the job (by its id, or,
 * for an enqueue, by its scope or dedupe key), its answer or refusal made the API's (docs/http-api.md,
 * The HTTP API). A batch over several objects commits in two phases (coordinator/batch-commit.ts).
 * No SQL here.
 *
 * @module
 */
import { crossingOf } from "../residency";
import { requireDeclared } from "../config/known-types";
import { QueueError } from "../errors";
import { groupByHome, jobIdFor, scopeHome } from "../job/home";
import { checkJsonSize } from "../job/json-size";
import type { JobLogLine } from "../job/log-lines";
import type { Children, EnqueueBatchItem, EnqueueRequest, EnqueueResult, Job, JobWhereQuery, Scope, StepView, Timeline } from "../job/schemas";
import { type EnqueueAnswer, type EnqueuedJob, type EnqueueRefusal, type NewJob, prepareJob } from "../scope/api";
import { commitAcross, PartRefused, type DecidedBy } from "./batch-commit";
import { inParallel } from "./homes";
import type { QueueContext } from "./queue-context";
import { notFound, refusalError } from "./refusals";

/** Homes one batch enqueue writes to in parallel (a batch spread over many scopes is many calls). */
const ENQUEUE_PARALLEL = 32;

type Item = { index: number; home: string; job: NewJob };

export class Jobs {
  constructor(private readonly q: QueueContext) {}

  async enqueue(body: EnqueueRequest): Promise<EnqueueResult> {
    return (await this.enqueueBatch([body], "", false, "jobs"))[0] as EnqueueResult;
  }

  /**
   * enqueueBatch checks every item first (sizes), so one bad item refuses the
   * whole call before anything is written; then one RPC to a single home, or, over
   * n homes, the staged commit of batch-commit.ts (2n − 1 calls in three rounds). `answer`: ids and
   * `created` only (a batch's default), or the jobs' views as well.
   */
  async enqueueBatch(bodies: readonly EnqueueRequest[], pathPrefix = "jobs", idsMadeUp = false, answer: EnqueueAnswer = "ids"): Promise<EnqueueBatchItem[]> {
    return (await this.enqueueDecided(bodies, pathPrefix, idsMadeUp, answer)).results;
  }

  /**
   * enqueueDecided: enqueueBatch, and — with `decidedBy` (an event's deliveries: coordinator/topics.ts) — decided by
   * the topic's registry, which takes the event in the deciding transaction; answers what that ended.
   */
  async enqueueDecided(
    bodies: readonly EnqueueRequest[],
    pathPrefix = "jobs",
    idsMadeUp = false,
    answer: EnqueueAnswer = "ids",
    decidedBy?: DecidedBy,
  ): Promise<{ results: EnqueueBatchItem[]; published: number | undefined }> {
    const now = Date.now();
    const { config } = this.q;
    const limits = config.limits;
    requireDeclared(config, bodies.map((b) => b.type), (i) => (pathPrefix ? `${pathPrefix}[${i}].type` : "type"));
    this.q.checkCallbacks(bodies, (i) => (pathPrefix ? `${pathPrefix}[${i}].callback` : "callback"));
    let total = 0;
    const prepared: Item[] = bodies.map((body, index) => {
      const payload = JSON.stringify(body.payload);
      total += checkJsonSize(payload, limits.payloadMaxBytes, pathPrefix ? `${pathPrefix}[${index}].payload` : "payload");
      return { index, ...withPath(pathPrefix ? `${pathPrefix}[${index}]` : "", () => prepareJob(config, body, payload, now, null, idsMadeUp)) };
    });
    if (total > limits.batchPayloadMaxBytes) {
      throw new QueueError("payload_too_large", `the batch's payloads total ${total} bytes; the limit is ${limits.batchPayloadMaxBytes}`, {
        path: pathPrefix || "payload",
        bytes: total,
        limitBytes: limits.batchPayloadMaxBytes,
      });
    }
    // A batch over several objects is committed through them (batch-commit.ts): all in one jurisdiction (src/residency.ts).
    const across = prepared.find((p) => crossingOf(config, prepared[0]!.home, p.home) !== null);
    if (across) {
      const path = `${pathPrefix ? `${pathPrefix}[${across.index}]` : "jobs[0]"}.scope`;
      throw new QueueError("invalid_request", `${path}: a batch's jobs live in one jurisdiction, and this one's is not the first job's: ${crossingOf(config, prepared[0]!.home, across.home)}`, { path });
    }
    const byHome = groupByHome(prepared, (p) => p.home);
    const conflict = (items: Item[], out: EnqueueRefusal) => {
      const index = items[out.index]!.index;
      const field = out.code === "queue_full" ? "type" : "dedupeKey";
      const path = pathPrefix ? `${pathPrefix}[${index}].${field}` : field;
      return new QueueError(out.code, `${path}: ${out.message}`, { path, index });
    };
    const results: EnqueueBatchItem[] = new Array(bodies.length);
    const put = (items: Item[], out: { results: EnqueuedJob[] }) =>
      out.results.forEach((r, k) => {
        // The id of the job that answers — a key's holder, when the key was held — so a GET of it finds that job. (An
        // object of the release before answers no `id`, only the job: docs/deploy.md "During a deploy".)
        const id = r.id ?? r.job?.id ?? items[k]!.job.id;
        results[items[k]!.index] = answer === "ids" ? { id, created: r.created } : { id, job: r.job ?? null, created: r.created };
      });
    const [only] = byHome;
    if (byHome.size === 1 && only && !decidedBy) {
      // One object's enqueue is one transaction: all or none by itself.
      const [home, items] = only;
      const out = await this.q.scope(home).enqueue(
        items.map((i) => i.job),
        answer,
      );
      if (!out.ok) throw conflict(items, out);
      put(items, out);
      return { results, published: undefined };
    }
    // Over several objects: staged everywhere, then committed everywhere or nowhere (batch-commit.ts).
    const parts = [...byHome].map(([home, items]) => ({ home, items, jobs: items.map((i) => i.job) }));
    const { answers, published } = await commitAcross(parts, (home) => this.q.scope(home), (list, f) => inParallel(list, ENQUEUE_PARALLEL, f), decidedBy).catch((e: unknown) => {
      throw e instanceof PartRefused ? conflict(parts[e.part]!.items, e.refusal) : e;
    });
    for (const [i, p] of parts.entries()) {
      const out = answers[i];
      // A decided part is never refused (enqueueJobs, `decided`); a part its alarm applied first answers its jobs as they are.
      if (!out?.ok) throw new Error(`part ${i} of a committed batch answered no jobs`);
      put(p.items, out);
    }
    return { results, published };
  }

  /**
   * get: a job by its id; or, given a type or a scope (`where`), by the id a caller gave at enqueue — its scope's
   * object, or each of its type's shards (a dedupe key, not the id, may have picked the shard). A full id is found
   * either way.
   */
  async get(id: string, where: JobWhereQuery = {}): Promise<Job> {
    for (const { home, full } of this.wherever(id, where)) {
      const job = await this.q.scope(home).get(full);
      if (job) return job;
    }
    throw notFound(id);
  }

  /** wherever: the objects a job may live in, and its full id there — those its type or scope say, else the one its id names. */
  private wherever(id: string, where: JobWhereQuery): { home: string; full: string }[] {
    const at = (home: string) => ({ home, full: id.startsWith(`${jobIdFor(home, "")}`) ? id : jobIdFor(home, id) });
    if (where.scopeType !== undefined && where.scopeId !== undefined) return [at(scopeHome({ type: where.scopeType, id: where.scopeId }).name)];
    if (where.type !== undefined) return this.q.typeHomes(where.type).map(at);
    return [{ home: this.q.homeOf(id), full: id }];
  }

  async timeline(id: string, limit: number): Promise<Timeline> {
    const t = await this.q.scope(this.q.homeOf(id)).timeline(id, limit);
    if (!t) throw notFound(id);
    return t as Timeline;
  }

  async logs(id: string): Promise<JobLogLine[]> {
    // Cast as steps() does: the RPC type of a JSON field is too deep for the checker.
    const lines = (await this.q.scope(this.q.homeOf(id)).logs(id)) as unknown as JobLogLine[] | null;
    if (!lines) throw notFound(id);
    return lines;
  }

  async steps(id: string): Promise<StepView[]> {
    const steps = await this.q.scope(this.q.homeOf(id)).steps(id);
    if (!steps) throw notFound(id);
    return steps as StepView[];
  }

  async resolveStep(id: string, name: string, result: unknown): Promise<Job> {
    const json = JSON.stringify(result ?? null);
    checkJsonSize(json, this.q.config.limits.payloadMaxBytes, "result");
    const out = await this.q.scope(this.q.homeOf(id)).resolveStep(id, name, json);
    if (!out.ok) throw refusalError(id, out, "resolve a step of");
    return out.job;
  }

  /** children: a page of the job's children, each read from its own home (one call per home, in parallel). */
  async children(id: string, afterSeq: number, limit: number): Promise<Children> {
    const page = await this.q.scope(this.q.homeOf(id)).children(id, afterSeq, limit + 1);
    if (!page) throw notFound(id);
    const shown = page.slice(0, limit);
    const found = new Map<string, Job>();
    const byHome = groupByHome(shown, (c) => this.q.homeOf(c.id));
    await inParallel([...byHome], ENQUEUE_PARALLEL, async ([home, list]) => {
      for (const job of (await this.q.scope(home).getMany(list.map((c) => c.id))) as Job[]) found.set(job.id, job);
    });
    return {
      children: shown.map((c) => ({ step: c.step, id: c.id, job: found.get(c.id) ?? null })),
      next: page.length > limit ? String(shown.at(-1)!.seq) : null,
    };
  }

  async cancel(id: string, reason: string | undefined, cascade = true): Promise<Job> {
    const out = await this.q.scope(this.q.homeOf(id)).cancel(id, reason ?? null, cascade);
    if (!out.ok) throw refusalError(id, out, "cancel");
    return out.job;
  }

  async retry(id: string): Promise<Job> {
    const out = await this.q.scope(this.q.homeOf(id)).retry(id);
    if (!out.ok) throw refusalError(id, out, "retry");
    return out.job;
  }

  /** pause: one job paused, or asked to pause at its next step (scope/jobs/job-pause.ts). */
  async pause(id: string): Promise<Job> {
    const out = await this.q.scope(this.q.homeOf(id)).pause(id);
    if (!out.ok) throw refusalError(id, out, "pause");
    return out.job;
  }

  /** resume: a paused job pending again at the time it was due, or a pause asked withdrawn. */
  async resume(id: string): Promise<Job> {
    const out = await this.q.scope(this.q.homeOf(id)).resume(id);
    if (!out.ok) throw refusalError(id, out, "resume");
    return out.job;
  }

  /** rerun: a new job from a finished one, in its object (scope/workflow/rerun.ts). */
  async rerun(id: string, fromStep: string | undefined, payload: unknown): Promise<Job> {
    const json = payload === undefined ? null : JSON.stringify(payload);
    if (json !== null) checkJsonSize(json, this.q.config.limits.payloadMaxBytes, "payload");
    const out = await this.q.scope(this.q.homeOf(id)).rerun(id, fromStep ?? null, json);
    if (!out.ok) throw refusalError(id, out, "rerun");
    return out.job;
  }

  async cancelScope(scope: Scope, pendingOnly: boolean, reason: string | undefined): Promise<number> {
    return this.q.scope(scopeHome(scope).name).cancelAll(pendingOnly, reason ?? null);
  }
}

/** withPath: a field refused while preparing a batch's job (its limit key: scope/jobs/new-job.ts) is named with the job's place in the batch. */
function withPath<T>(prefix: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (!prefix || !(e instanceof QueueError) || e.code !== "invalid_request" || !Array.isArray(e.details)) throw e;
    const details = (e.details as { path: string; message: string }[]).map((d) => ({ path: `${prefix}.${d.path}`, message: d.message }));
    throw new QueueError("invalid_request", `${prefix}.${e.message}`, details);
  }
}
