/**
 * The queue's operations as the coordinator performs them: route each call to
 * the object that owns the job (by id, scope or dedupe key), ask the catalog
 * where work is for cross-object calls, and turn rows and refusals into the
 * API's shapes. HTTP routes and the RPC entrypoint both call these, after
 * validating their input with the same schemas. No SQL here.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import type { Env } from "../env";
import { requireDeclared, requireKnown } from "../config/known-types";
import { QueueError } from "../errors";
import { checkJsonSize } from "../job/json-size";
import { homeFor, homeOfJobId, parseHome, scopeHome, typeHome } from "../job/home";
import type { PoolLimits, PoolStatus } from "../pool/permits";
import { resourcePoolName, typePoolName } from "../pool/pool-name";
import { guarded } from "../dispatch/permit-plan";
import { Catalogs } from "../catalog/shards";
import type { JobLogLine } from "../job/log-lines";
import type { WorkerLogItem } from "../scope/job-logs";
import type {
  AppendLogsRequest,
  PauseResult,
  TypeList,
  ClaimRequest,
  EnqueueRequest,
  EnqueueResult,
  FailRequest,
  Job,
  LeasedJob,
  ListQuery,
  ListResult,
  PoolLimitsRequest,
  PoolStatusBody,
  PruneRequest,
  RetryFailedRequest,
  Scope,
  Stats,
  StatsResult,
  StepView,
  ClaimOrEnqueueRequest,
  ClaimOrEnqueueResult,
  ClaimKeyRequest,
  AppendStepRequest,
  SleepRequest,
  Timeline,
  ScopeStats,
  FailOutcome,
  CompleteManyResult,
  CancelKeysRequest,
} from "../job/schemas";
import { zeroCounters } from "../metrics/counters";
import type { Metrics, MetricsQuery } from "../metrics/schemas";
import { zeroKinds } from "../scope/summary";
import { TERMINAL_STATES } from "../job/states";
import type { FailedCursor } from "../scope/change";
import type { EnqueueRefusal, NewJob } from "../scope/enqueue";
import { prepareJob } from "../scope/new-job";
import { toJob, toLeasedJob, type JobRow } from "../scope/job-row";
import { commitAcross, PartRefused } from "./batch-commit";
import type { Refusal } from "../scope/outcome";
import { decodeCursor, encodeCursor, packJson, unpackJson } from "./cursor";
import { Schedules } from "./schedules";
import { Topics } from "./topics";

/** Homes asked in parallel by one claim wave. */
const CLAIM_WAVE = 8;
/** Fallback homes a claim asks the catalog for beyond its limit, in case a summary is stale. */
const CLAIM_SPARE_HOMES = 3;
/** Homes one listing page may visit before it returns a cursor. */
const LIST_HOMES_PER_PAGE = 20;
/** Homes pruned in parallel, and asked of the catalog per page. */
const PRUNE_PARALLEL = 16;
const PRUNE_PAGE = 64;
/** Homes one batch enqueue writes to in parallel (a batch spread over many scopes is many calls). */
const ENQUEUE_PARALLEL = 32;

export class QueueOps {
  constructor(
    private readonly env: Env,
    private readonly config: QueueConfig,
  ) {}

  get schedules(): Schedules {
    return new Schedules(this.env, this.config);
  }

  /** Event topics over the same operations. */
  get topics(): Topics {
    return new Topics(this, this.config);
  }

  private scope(home: string) {
    return this.env.SCOPE.getByName(home);
  }

  private catalog(): Catalogs {
    return new Catalogs(this.env.CATALOG, this.config.catalogShards);
  }

  /** homeOf routes a job id; an id that cannot name one of our objects is simply not found (and wakes no object). */
  private homeOf(id: string): string {
    const home = homeOfJobId(id);
    if (!home || (home.kind === "type" && home.shard >= this.config.typeSettings(home.type).shards)) throw notFound(id);
    return home.name;
  }

  // ------------------------------------------------------------ enqueue

  async enqueue(body: EnqueueRequest): Promise<EnqueueResult> {
    return (await this.enqueueBatch([body], ""))[0]!;
  }

  /**
   * enqueueBatch checks every item first (sizes), so one bad item refuses the
   * whole call before anything is written; then one RPC to a single home, or, over
   * n homes, the staged commit of batch-commit.ts (2n − 1 calls in three rounds).
   */
  async enqueueBatch(bodies: readonly EnqueueRequest[], pathPrefix = "jobs"): Promise<EnqueueResult[]> {
    const now = Date.now();
    const limits = this.config.limits;
    requireDeclared(this.config, bodies.map((b) => b.type), (i) => (pathPrefix ? `${pathPrefix}[${i}].type` : "type"));
    let total = 0;
    const prepared = bodies.map((body, i) => {
      const payload = JSON.stringify(body.payload);
      total += checkJsonSize(payload, limits.payloadMaxBytes, pathPrefix ? `${pathPrefix}[${i}].payload` : "payload");
      return prepareJob(this.config, body, payload, now);
    });
    if (total > limits.batchPayloadMaxBytes) {
      throw new QueueError("payload_too_large", `the batch's payloads total ${total} bytes; the limit is ${limits.batchPayloadMaxBytes}`, {
        path: pathPrefix || "payload",
        bytes: total,
        limitBytes: limits.batchPayloadMaxBytes,
      });
    }
    const byHome = new Map<string, { index: number; job: NewJob }[]>();
    prepared.forEach((p, index) => {
      const list = byHome.get(p.home) ?? [];
      list.push({ index, job: p.job });
      byHome.set(p.home, list);
    });
    const conflict = (items: { index: number }[], out: EnqueueRefusal) => {
      const index = items[out.index]!.index;
      const field = out.code === "queue_full" ? "type" : "dedupeKey";
      const path = pathPrefix ? `${pathPrefix}[${index}].${field}` : field;
      return new QueueError(out.code, `${path}: ${out.message}`, { path, index });
    };
    const results: EnqueueResult[] = new Array(bodies.length);
    const put = (items: { index: number; job: NewJob }[], out: { results: { row: JobRow | null; created: boolean }[] }) =>
      out.results.forEach((r, k) => {
        // The id of the job that answers — a key's holder, when the key was held — so a GET of it finds that job.
        results[items[k]!.index] = { id: r.row?.id ?? items[k]!.job.id, job: r.row === null ? null : toJob(r.row), created: r.created };
      });
    const [only] = byHome;
    if (byHome.size === 1 && only) {
      // One object's enqueue is one transaction: all or none by itself.
      const [home, items] = only;
      const out = await this.scope(home).enqueue(items.map((i) => i.job));
      if (!out.ok) throw conflict(items, out);
      put(items, out);
      return results;
    }
    // Over several objects: staged everywhere, then committed everywhere or nowhere (batch-commit.ts).
    const parts = [...byHome].map(([home, items]) => ({ home, items, jobs: items.map((i) => i.job) }));
    const answers = await commitAcross(parts, (home) => this.scope(home), (list, f) => inParallel(list, ENQUEUE_PARALLEL, f)).catch((e: unknown) => {
      throw e instanceof PartRefused ? conflict(parts[e.part]!.items, e.refusal) : e;
    });
    for (const [i, p] of parts.entries()) {
      const out = answers[i];
      // A decided part is never refused (enqueueJobs, `decided`); a part its alarm applied first answers its jobs as they are.
      if (!out?.ok) throw new Error(`part ${i} of a committed batch answered no jobs`);
      put(p.items, out);
    }
    return results;
  }

  // ------------------------------------------------------------ read

  async get(id: string): Promise<Job> {
    const row = await this.scope(this.homeOf(id)).get(id);
    if (!row) throw notFound(id);
    return toJob(row);
  }

  async list(q: ListQuery): Promise<ListResult> {
    const filter = { types: q.type, states: q.state, tag: q.tag, failureKinds: q.failureKind, dedupeKey: q.dedupeKey };
    if (q.scopeType !== undefined && q.scopeId !== undefined) {
      const home = scopeHome({ type: q.scopeType, id: q.scopeId }).name;
      const cursor = q.cursor ? decodeCursor(q.cursor) : { h: home, s: 0 };
      if (cursor.h !== home || cursor.s < 0) throw invalidCursor();
      const rows = await this.scope(home).list(filter, cursor.s, q.limit + 1);
      const page = rows.slice(0, q.limit);
      const last = page[page.length - 1];
      return { items: page.map(toJob), nextCursor: rows.length > q.limit && last ? encodeCursor({ h: home, s: last.seq }) : null };
    }

    const cursor = q.cursor ? decodeCursor(q.cursor) : { h: "", s: -1 };
    // A failure-kind filter only finds failed jobs: only homes holding some are visited.
    const states = q.failureKind ? (q.state ?? ["failed"]).filter((s) => s === "failed") : q.state;
    const homes = await this.catalog().listHomes({ types: q.type, states }, cursor.h, cursor.s >= 0, LIST_HOMES_PER_PAGE);
    const items: Job[] = [];
    for (const home of homes) {
      const need = q.limit - items.length;
      const rows = await this.scope(home).list(filter, home === cursor.h ? Math.max(cursor.s, 0) : 0, need + 1);
      const taken = rows.slice(0, need);
      items.push(...taken.map(toJob));
      if (rows.length > need) return { items, nextCursor: encodeCursor({ h: home, s: taken[taken.length - 1]?.seq ?? cursor.s }) };
      if (items.length === q.limit) return { items, nextCursor: encodeCursor({ h: home, s: -1 }) };
    }
    const lastHome = homes[homes.length - 1];
    return { items, nextCursor: homes.length === LIST_HOMES_PER_PAGE && lastHome ? encodeCursor({ h: lastHome, s: -1 }) : null };
  }

  async stats(type: string | undefined): Promise<StatsResult> {
    return this.catalog().stats(type ?? null);
  }

  /**
   * metrics: per type (every configured type, and any other the catalog
   * knows), counts, lag and totals; and the per-minute series of the last
   * `minutes` minutes. As fresh as the catalog's summaries (about a second).
   */
  async metrics(q: MetricsQuery): Promise<Metrics> {
    const o = await this.catalog().overview(q.minutes, q.type ?? null);
    const names = [...new Set([...Object.keys(this.config.types), ...o.types.map((t) => t.type), ...o.totals.map((t) => t.type)])]
      .filter((t) => q.type === undefined || t === q.type)
      .sort();
    const types = names.map((type) => {
      const { type: _t, ...stats } = o.types.find((s) => s.type === type) ?? { type, ...emptyStats(), unhandled: false };
      const { type: _u, ...totals } = o.totals.find((s) => s.type === type) ?? { type, ...zeroCounters() };
      return { type, ...stats, totals };
    });
    return { at: o.at, types, minutes: o.minutes };
  }

  /**
   * setPaused: every catalog shard records the change and tells each object it promised to (catalog/pause-store.ts);
   * the answer comes once they were told, so nothing of a paused type starts after it. Enqueues are not refused.
   */
  async setPaused(type: string, paused: boolean): Promise<PauseResult> {
    await this.requireKnownType(type, "type");
    const out = await this.catalog().setPaused(type, paused);
    return { type, paused, unreached: out.untold.length };
  }

  /** requireKnownType: refuse an operator's type name the queue neither declares nor has seen (config/known-types.ts). */
  private async requireKnownType(type: string, field: string): Promise<void> {
    requireDeclared(this.config, [type], () => field);
    if (Object.hasOwn(this.config.types, type)) return;
    requireKnown(type, (await this.types()).items.map((t) => t.type), field);
  }

  /** pauses: every type ever paused, with whether it is now. */
  pauses(): Promise<Map<string, { paused: boolean; changedAt: number }>> {
    return this.catalog().pauses();
  }

  /** types: every configured type and any other the catalog has seen or paused, with pause state and counts. */
  async types(): Promise<TypeList> {
    const [o, pauses] = await Promise.all([this.catalog().overview(1, null), this.pauses()]);
    const names = [...new Set([...Object.keys(this.config.types), ...o.types.map((t) => t.type), ...pauses.keys()])].sort();
    return {
      items: names.map((type) => {
        const { type: _t, unhandled: _u, ...counts } = o.types.find((s) => s.type === type) ?? { type, ...emptyStats(), unhandled: false };
        const pause = pauses.get(type);
        return {
          type,
          paused: pause?.paused ?? false,
          pausedChangedAt: pause?.changedAt ?? null,
          pushed: this.config.pushTypes.includes(type),
          declared: type in this.config.types,
          counts,
        };
      }),
    };
  }

  /** busiestScopes: homes by live jobs, most first (scope objects and type shards alike). */
  async busiestScopes(limit: number): Promise<ScopeStats[]> {
    const homes = await this.catalog().busiestHomes(limit);
    return homes.map(({ home, ...stats }) => {
      const parsed = parseHome(home);
      return { home, scope: parsed?.kind === "scope" ? parsed.scope : null, ...stats };
    });
  }

  async timeline(id: string, limit: number): Promise<Timeline> {
    const t = await this.scope(this.homeOf(id)).timeline(id, limit);
    if (!t) throw notFound(id);
    return t as Timeline;
  }

  async logs(id: string): Promise<JobLogLine[]> {
    // Cast as steps() does: the RPC type of a JSON field is too deep for the checker.
    const lines = (await this.scope(this.homeOf(id)).logs(id)) as unknown as JobLogLine[] | null;
    if (!lines) throw notFound(id);
    return lines;
  }

  /** appendLogs: a pull worker's lines for its attempt, fenced by its lease; clipped as a pushed handler's are. */
  async appendLogs(id: string, req: AppendLogsRequest): Promise<number> {
    const out = await this.scope(this.homeOf(id)).appendLogs(id, req.leaseToken, req.items);
    if (!out.ok) throw refusalError(id, out, "logs");
    return out.stored;
  }

  // ------------------------------------------------------------ durable steps

  async steps(id: string): Promise<StepView[]> {
    const steps = await this.scope(this.homeOf(id)).steps(id);
    if (!steps) throw notFound(id);
    return steps as StepView[];
  }

  async resolveStep(id: string, name: string, result: unknown): Promise<Job> {
    const json = JSON.stringify(result ?? null);
    checkJsonSize(json, this.config.limits.payloadMaxBytes, "result");
    const out = await this.scope(this.homeOf(id)).resolveStep(id, name, json);
    if (!out.ok) throw refusalError(id, out, "resolve a step of");
    return toJob(out.row);
  }

  async appendStep(id: string, body: AppendStepRequest): Promise<void> {
    const result = body.op === "commit" ? JSON.stringify(body.result ?? null) : null;
    if (result !== null) checkJsonSize(result, this.config.limits.payloadMaxBytes, "result");
    const out = await this.scope(this.homeOf(id)).appendStep({ id, op: body.op, seq: body.seq, name: body.name, result, startedAt: body.startedAt, start: body.start }, body.leaseToken);
    if (!out.ok) throw refusalError(id, out, "journal a step of");
  }

  // ------------------------------------------------------------ inline claims

  async claimOrEnqueue(req: ClaimOrEnqueueRequest): Promise<ClaimOrEnqueueResult> {
    const body = { ...req.job, dedupeMode: "pending" as const };
    this.requirePulled(body.type, "job.type");
    const payload = JSON.stringify(body.payload);
    checkJsonSize(payload, this.config.limits.payloadMaxBytes, "job.payload");
    requireDeclared(this.config, [body.type], () => "job.type");
    const { home, job } = prepareJob(this.config, body, payload, Date.now());
    const out = await this.scope(home).claimOrEnqueue(job, req.worker, req.leaseMs);
    if (!out.ok && out.code === "queue_full") throw new QueueError("queue_full", `job.type: ${out.message}`, { path: "job.type" });
    if (!out.ok) throw new QueueError("conflict", `job.dedupeKey: ${out.message}`, { path: "job.dedupeKey" });
    return { leased: out.leased ? toLeasedJob(out.leased) : null, job: toJob(out.job), created: out.created };
  }

  async claimKey(req: ClaimKeyRequest): Promise<LeasedJob | null> {
    this.requirePulled(req.type, "type");
    const home = homeFor({ type: req.type, scope: req.scope, dedupeKey: req.dedupeKey, localId: "" }, this.config.typeSettings(req.type).shards).name;
    const row = await this.scope(home).claimKey(req.type, req.dedupeKey, req.worker, req.leaseMs);
    return row ? toLeasedJob(row) : null;
  }

  /**
   * requirePulled: inline claims run in the caller; a pushed type's jobs belong to its handler. A guarded type's
   * claim must take permits first, which the one-transaction inline claim cannot wait for: a worker claims those.
   */
  private requirePulled(type: string, path: string): void {
    let message: string | null = null;
    if (this.config.pushTypes.includes(type)) message = `job type ${type} is pushed to its handler binding; it cannot be claimed by a caller`;
    else if (guarded(this.config, type) || this.config.typeSettings(type).waitsFor.length > 0) {
      message = `job type ${type} is guarded (concurrency, pools, notWhileRunning or waitsFor); enqueue it and claim it with a worker instead`;
    }
    if (message !== null) throw new QueueError("invalid_request", `${path}: ${message}`, [{ path, message }]);
  }

  async release(id: string, leaseToken: string): Promise<Job> {
    const out = await this.scope(this.homeOf(id)).release(id, leaseToken);
    if (!out.ok) throw refusalError(id, out, "release");
    return toJob(out.row);
  }

  async sleep(id: string, body: SleepRequest): Promise<Job> {
    const { leaseToken, ...input } = body;
    const out = await this.scope(this.homeOf(id)).sleep(id, leaseToken, input);
    if (!out.ok) throw refusalError(id, out, "put to sleep");
    return toJob(out.row);
  }

  // ------------------------------------------------------------ change

  async cancel(id: string, reason: string | undefined): Promise<Job> {
    const out = await this.scope(this.homeOf(id)).cancel(id, reason ?? null);
    if (!out.ok) throw refusalError(id, out, "cancel");
    return toJob(out.row);
  }

  async retry(id: string): Promise<Job> {
    const out = await this.scope(this.homeOf(id)).retry(id);
    if (!out.ok) throw refusalError(id, out, "retry");
    return toJob(out.row);
  }

  /** retryFailed: every failed job of a scope, or of every home holding failed jobs (of `type`), back to pending. */
  async retryFailed(req: RetryFailedRequest): Promise<{ retried: number; skipped: number; nextCursor: string | null }> {
    if (req.type !== undefined) await this.requireKnownType(req.type, "type");
    if (req.limit !== undefined || req.cursor !== undefined) return this.retryFailedPage(req, req.limit ?? 1000);
    const total = { retried: 0, skipped: 0, nextCursor: null };
    const add = (r: { retried: number; skipped: number }) => {
      total.retried += r.retried;
      total.skipped += r.skipped;
    };
    const type = req.type ?? null;
    // Page by page within a home: each call is bounded, and the object serves others in between.
    const drain = async (home: string) => {
      for (let after: FailedCursor | null = null; ; ) {
        const page: { retried: number; skipped: number; next: FailedCursor | null } = await this.scope(home).retryFailed(type, after);
        add(page);
        if (!page.next) return;
        after = page.next;
      }
    };
    if (req.scopeType !== undefined && req.scopeId !== undefined) {
      await drain(scopeHome({ type: req.scopeType, id: req.scopeId }).name);
      return total;
    }
    for (let after = ""; ; ) {
      const homes = await this.catalog().listHomes({ types: req.type === undefined ? undefined : [req.type], states: ["failed"] }, after, false, PRUNE_PAGE);
      await inParallel(homes, PRUNE_PARALLEL, drain);
      if (homes.length < PRUNE_PAGE) return total;
      after = homes[homes.length - 1]!;
    }
  }

  /** cancelKeys: each key's object (its scope's, or the type shard its key hashes to) cancels the type's live jobs under it. */
  async cancelKeys(req: CancelKeysRequest): Promise<number> {
    requireDeclared(this.config, [req.type], () => "type");
    const shards = this.config.typeSettings(req.type).shards;
    const byHome = new Map<string, string[]>();
    for (const key of new Set(req.dedupeKeys)) {
      const home = homeFor({ type: req.type, scope: req.scope ?? null, dedupeKey: key, localId: "" }, shards).name;
      byHome.set(home, [...(byHome.get(home) ?? []), key]);
    }
    let cancelled = 0;
    await inParallel([...byHome], ENQUEUE_PARALLEL, async ([home, keys]) => {
      cancelled += await this.scope(home).cancelKeys(req.type, keys, req.reason ?? null);
    });
    return cancelled;
  }

  /**
   * retryFailedPage: bulk retry that looks at `limit` failed jobs at most, home by home in name order and
   * within a home by finish time, and says where the next call goes on: `{h: home, f: finishedAt, s: seq}`.
   */
  private async retryFailedPage(req: RetryFailedRequest, limit: number): Promise<{ retried: number; skipped: number; nextCursor: string | null }> {
    const type = req.type ?? null;
    const total = { retried: 0, skipped: 0 };
    const at = req.cursor === undefined ? null : decodeRetryCursor(req.cursor);
    const single = req.scopeType !== undefined && req.scopeId !== undefined ? scopeHome({ type: req.scopeType, id: req.scopeId }).name : null;
    let after = at?.h ?? "";
    let inHome: FailedCursor | null = at ? { finishedAt: at.f, seq: at.s } : null;
    for (;;) {
      const homes = single !== null ? (after === "" || after === single ? [single] : []) : await this.catalog().listHomes({ types: type === null ? undefined : [type], states: ["failed"] }, after, at !== null && after === at.h, PRUNE_PAGE);
      for (const home of homes) {
        for (;;) {
          const left = limit - total.retried - total.skipped;
          if (left <= 0) return { ...total, nextCursor: packJson({ h: home, f: inHome?.finishedAt ?? -1, s: inHome?.seq ?? -1 }) };
          const page = await this.scope(home).retryFailed(type, inHome, Math.min(left, 200));
          total.retried += page.retried;
          total.skipped += page.skipped;
          inHome = page.next;
          if (!page.next) break;
        }
        // This home is done: a call that stops now goes on after it (past every finish time here), the next home from its start.
        inHome = { finishedAt: Number.MAX_SAFE_INTEGER, seq: Number.MAX_SAFE_INTEGER };
        if (limit - total.retried - total.skipped <= 0) return { ...total, nextCursor: packJson({ h: home, f: inHome.finishedAt, s: inHome.seq }) };
        inHome = null;
        after = home;
      }
      if (single !== null || homes.length < PRUNE_PAGE) return { ...total, nextCursor: null };
    }
  }

  async cancelScope(scope: Scope, pendingOnly: boolean, reason: string | undefined): Promise<number> {
    return this.scope(scopeHome(scope).name).cancelAll(pendingOnly, reason ?? null);
  }

  /** prune visits every home the catalog knows to hold terminal jobs of the given states. */
  async prune(req: PruneRequest): Promise<number> {
    const states = req.states ?? [...TERMINAL_STATES];
    let deleted = 0;
    let after = "";
    for (;;) {
      const homes = await this.catalog().homesWithTerminal(states, after, PRUNE_PAGE);
      await inParallel(homes, PRUNE_PARALLEL, async (home) => {
        const n = await this.scope(home).prune(req.olderThan, states); // not `deleted += await …`: that reads `deleted` before the await
        deleted += n;
      });
      if (homes.length < PRUNE_PAGE) return deleted;
      after = homes[homes.length - 1]!;
    }
  }

  // ------------------------------------------------------------ pools

  /** The pools the config declares, and each type's concurrency (named `type:<jobType>`). */
  private poolTargets(): { name: string; object: string; types: string[]; configured: PoolLimits }[] {
    const out = Object.values(this.config.pools).map((p) => ({
      name: p.name,
      object: resourcePoolName(p.name),
      types: p.types,
      configured: { concurrency: p.concurrency, ratePerMinute: p.ratePerMinute },
    }));
    for (const [type, t] of Object.entries(this.config.types)) {
      if (t.concurrency !== null) out.push({ name: `type:${type}`, object: typePoolName(type), types: [type], configured: { concurrency: t.concurrency, ratePerMinute: null } });
    }
    return out;
  }

  async listPools(): Promise<PoolStatusBody[]> {
    return Promise.all(this.poolTargets().map(async (t) => this.poolBody(t, await this.env.POOL.getByName(t.object).status(t.configured))));
  }

  async setPoolLimits(name: string, limits: PoolLimitsRequest): Promise<PoolStatusBody> {
    const target = this.poolTargets().find((t) => t.name === name);
    if (!target) throw new QueueError("not_found", `no pool named ${name}: pools are declared in the config (a type's concurrency is type:<jobType>)`);
    const refuse = (key: string, message: string) => new QueueError("invalid_request", `${key}: ${message}`, [{ path: key, message }]);
    for (const key of ["concurrency", "ratePerMinute"] as const) {
      if (limits[key] !== undefined && target.configured[key] === null) {
        throw refuse(key, `pool ${name} has no ${key} in the config; declare one there first (PUT only changes a limit the config sets)`);
      }
    }
    // A limit below a member's cost would stop that type for good.
    const pool = this.config.pools[name];
    const maxCost = Math.max(1, ...Object.values(pool?.costs ?? {}));
    const maxRateCost = Math.max(1, ...Object.values(pool?.rateCosts ?? {}));
    if (typeof limits.concurrency === "number" && limits.concurrency < maxCost) throw refuse("concurrency", `must be at least ${maxCost}, the largest member cost`);
    if (typeof limits.ratePerMinute === "number" && limits.ratePerMinute < maxRateCost) throw refuse("ratePerMinute", `must be at least ${maxRateCost}, the largest member rate cost`);
    return this.poolBody(target, await this.env.POOL.getByName(target.object).setLimits(limits, target.configured));
  }

  private poolBody(t: { name: string; types: string[]; configured: PoolLimits }, s: PoolStatus): PoolStatusBody {
    return {
      name: t.name,
      types: t.types,
      configured: t.configured,
      limits: s.limits,
      active: s.active,
      permits: s.permits,
      window: s.window,
      waiting: s.waiting.map((w) => {
        const home = parseHome(w.holder);
        return { holder: w.holder, scope: home?.kind === "scope" ? home.scope : null, type: w.type, since: w.since, reservedUntil: w.reservedUntil };
      }),
    };
  }

  // ------------------------------------------------------------ pull workers

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
    // Nothing due: park on the types' wait objects until a scope object says one has due work (wait/wait-do.ts).
    // Parked, the claim costs the queue nothing per second: no catalog write, no alarm, a promise in memory.
    const types = [...new Set(req.types)];
    const deadline = started + req.waitMs;
    // Per type: the last notice acted on, by that wait object's clock (one type's notices never hide another's).
    const since = new Map(types.map((t) => [t, started]));
    for (let left = req.waitMs; left > 0; left = deadline - Date.now()) {
      const woke = await Promise.race(types.map(async (t) => ({ type: t, ...(await this.env.WAIT.getByName(`wait:${t}`).wait(left, since.get(t)!)) })));
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
  async claimAfterCompleting(req: ClaimRequest): Promise<{ jobs: LeasedJob[]; completed?: CompleteManyResult["results"] }> {
    if (!req.complete) return { jobs: await this.claim(req) };
    this.checkClaimTypes(req);
    const completed = await this.completeMany(req.complete);
    return { jobs: await this.claim({ ...req, waitMs: undefined }), completed };
  }

  /** claimFrom: claim from these homes directly (the ones a wait object named), one after another until `limit`. */
  private async claimFrom(homes: string[], req: { worker: string; types: string[]; limit: number; leaseMs: number; tags?: string[] }): Promise<LeasedJob[]> {
    const jobs: LeasedJob[] = [];
    for (const home of homes) {
      if (jobs.length >= req.limit) break;
      try {
        for (const r of await this.scope(home).claim({ ...req, limit: req.limit - jobs.length })) jobs.push(toLeasedJob(r));
      } catch (e) {
        // Jobs leased by the homes that answered must reach the worker (as in claimNow): a failing home is skipped.
        console.error(JSON.stringify({ event: "claim:home_failed", failures: [{ home, error: String(e) }] }));
      }
    }
    return jobs;
  }

  /** checkClaimTypes: a claim names only declared, pulled types; refused before anything is written. */
  private checkClaimTypes(req: ClaimRequest): void {
    requireDeclared(this.config, req.types ?? [], (i) => `types[${i}]`);
    req.types?.forEach((t, i) => {
      if (this.config.pushTypes.includes(t)) {
        const message = `job type ${t} is pushed to its handler binding; it cannot be claimed by a pull worker`;
        throw new QueueError("invalid_request", `types[${i}]: ${message}`, [{ path: `types[${i}]`, message }]);
      }
    });
  }

  private async claimNow(req: ClaimRequest): Promise<LeasedJob[]> {
    const types = req.types ? [...new Set(req.types)] : null;
    this.checkClaimTypes(req);
    // Without types, pushed types' objects are never asked: their jobs belong to the handler.
    const pushTypes = this.config.pushTypes;
    const picked = await this.catalog().pickHomes(types, types ? [] : [...pushTypes], req.limit, CLAIM_SPARE_HOMES);
    const direct = (types ?? Object.keys(this.config.types).filter((t) => !pushTypes.includes(t))).flatMap((t) =>
      Array.from({ length: this.config.typeSettings(t).shards }, (_, k) => typeHome(t, k).name),
    );
    const candidates = [...new Set([...picked, ...direct])];
    const jobs: LeasedJob[] = [];
    const failures: { home: string; error: string }[] = [];
    for (let i = 0; i < candidates.length && jobs.length < req.limit; ) {
      const remaining = req.limit - jobs.length;
      const wave = candidates.slice(i, i + Math.min(remaining, CLAIM_WAVE));
      i += wave.length;
      const settled = await Promise.allSettled(
        wave.map((home, k) =>
          this.scope(home).claim({ worker: req.worker, types, limit: share(remaining, wave.length, k), leaseMs: req.leaseMs, ...(req.tags ? { tags: req.tags } : {}) }),
        ),
      );
      // Jobs leased by the homes that answered must reach the worker even if another home failed:
      // dropping them would strand them until their lease expires, spending an attempt.
      for (const [k, s] of settled.entries()) {
        if (s.status === "fulfilled") for (const r of s.value) jobs.push(toLeasedJob(r));
        else failures.push({ home: wave[k]!, error: String(s.reason) });
      }
    }
    if (failures.length > 0) {
      console.error(JSON.stringify({ event: "claim:home_failed", failures }));
      if (jobs.length === 0) throw new Error(`claim failed in ${failures.length} object(s): ${failures[0]!.error}`);
    }
    return jobs;
  }

  async heartbeat(id: string, leaseToken: string, leaseMs: number | undefined): Promise<number> {
    const out = await this.scope(this.homeOf(id)).heartbeat(id, leaseToken, leaseMs ?? null);
    if (!out.ok) throw refusalError(id, out, "heartbeat");
    return out.leaseExpiresAt;
  }

  async complete(id: string, leaseToken: string, result: object | undefined): Promise<Job> {
    const resultJson = result === undefined ? null : JSON.stringify(result);
    if (resultJson !== null) checkJsonSize(resultJson, this.config.limits.payloadMaxBytes, "result");
    const out = await this.scope(this.homeOf(id)).complete(id, leaseToken, resultJson);
    if (!out.ok) throw refusalError(id, out, "complete");
    return toJob(out.row);
  }

  /**
   * completeMany: each item as `complete` would answer it, in one call per home (one transaction and one
   * statement there). An item's own problem (a result too large, a lost lease) is its answer, not the call's.
   */
  async completeMany(items: readonly { id: string; leaseToken: string; result?: object; logs?: WorkerLogItem[] }[]): Promise<CompleteManyResult["results"]> {
    const answers: CompleteManyResult["results"] = items.map((i) => ({ id: i.id, ok: true as const }));
    const refuse = (k: number, e: unknown) => {
      const q = e instanceof QueueError ? e : new QueueError("internal", String(e));
      answers[k] = { id: items[k]!.id, ok: false, error: { code: q.code, message: q.message } };
    };
    const byHome = new Map<string, { k: number; id: string; token: string; result: string | null; logs?: WorkerLogItem[] }[]>();
    items.forEach((item, k) => {
      try {
        const result = item.result === undefined ? null : JSON.stringify(item.result);
        if (result !== null) checkJsonSize(result, this.config.limits.payloadMaxBytes, `items[${k}].result`);
        const home = this.homeOf(item.id);
        byHome.set(home, [...(byHome.get(home) ?? []), { k, id: item.id, token: item.leaseToken, result, ...(item.logs ? { logs: item.logs } : {}) }]);
      } catch (e) {
        refuse(k, e);
      }
    });
    await Promise.all(
      [...byHome].map(async ([home, group]) => {
        try {
          const outs = await this.scope(home).completeMany(group.map(({ id, token, result, logs }) => ({ id, token, result, ...(logs ? { logs } : {}) })));
          outs.forEach((out, i) => {
            if (!out.ok) refuse(group[i]!.k, refusalError(group[i]!.id, out, "complete"));
          });
        } catch (e) {
          for (const g of group) refuse(g.k, e);
        }
      }),
    );
    return answers;
  }

  async fail(id: string, req: FailRequest): Promise<{ job: Job; outcome: FailOutcome }> {
    const out = await this.scope(this.homeOf(id)).fail(id, req.leaseToken, {
      error: req.error,
      retryAfterMs: req.retryAfterMs,
      fatal: req.fatal,
      consumesAttempt: req.consumesAttempt,
    });
    if (!out.ok) throw refusalError(id, out, "fail");
    return { job: toJob(out.row), outcome: out.outcome };
  }
}

/** inParallel runs `fn` over `items` with at most `width` calls in flight; after a failure it starts no more. */
async function inParallel<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length && !failed) {
        try {
          await fn(items[next++]!);
        } catch (e) {
          failed = true;
          throw e;
        }
      }
    }),
  );
}

/** share: split `total` over `n` homes as evenly as integers allow (the first get the remainder). */
function share(total: number, n: number, k: number): number {
  return Math.floor(total / n) + (k < total % n ? 1 : 0);
}

function emptyStats(): Stats {
  return { pending: 0, scheduled: 0, running: 0, completed: 0, failed: 0, cancelled: 0, superseded: 0, oldestPendingLagMs: 0, failedByKind: zeroKinds() };
}

function notFound(id: string): QueueError {
  return new QueueError("not_found", `job ${id} not found`);
}

function invalidCursor(): QueueError {
  return new QueueError("invalid_request", "cursor: not a cursor for this listing", [{ path: "cursor", message: "not a cursor for this listing" }]);
}

function refusalError(id: string, r: Refusal, action: string): QueueError {
  switch (r.code) {
    case "not_found":
      return notFound(id);
    case "lease_lost":
      return new QueueError("lease_lost", `cannot ${action} job ${id}: ${LEASE_LOST_WHY[r.reason]}`, { reason: r.reason, state: r.state });
    case "already_terminal":
      return new QueueError("already_terminal", `cannot ${action} job ${id}: it is already ${r.state}`, { state: r.state });
    case "conflict":
      return new QueueError("conflict", `cannot ${action} job ${id}: ${r.reason}`, { state: r.state });
    case "nondeterminism":
      return new QueueError("conflict", `cannot ${action} job ${id}: ${r.reason}`, { state: r.state, reason: "nondeterminism" });
    case "payload_too_large":
    case "journal_too_large":
      return new QueueError("payload_too_large", `cannot ${action} job ${id}: ${r.reason}`, { state: r.state, reason: r.code });
  }
}

const LEASE_LOST_WHY = {
  stale_token: "the lease token is not the job's current lease (it expired and the job was claimed again, or the token is wrong)",
  expired: "the lease expired",
  cancelled: "the job was cancelled",
  timeout: "the attempt ran past the job's timeoutMs",
} as const;

/** decodeRetryCursor: a bulk retry's `nextCursor` (base64url JSON `{h, f, s}`), or a 400 naming `cursor`. */
function decodeRetryCursor(text: string): { h: string; f: number; s: number } {
  try {
    const v = unpackJson(text) as Record<string, unknown>;
    if (typeof v.h === "string" && Number.isSafeInteger(v.f) && Number.isSafeInteger(v.s)) return { h: v.h, f: v.f as number, s: v.s as number };
  } catch {
    // fall through to the error below
  }
  throw new QueueError("invalid_request", "cursor: not a cursor returned by this API", [{ path: "cursor", message: "not a cursor returned by this API" }]);
}
