/**
 * A leased job, as its holder — a pull worker, or an inline caller — renews, journals, logs and
 * settles it, each call fenced by the lease token in the object that owns the job
 * (docs/pull-workers.md, docs/reliability.md). No SQL here.
 *
 * @module
 */
import { QueueError } from "../errors";
import { checkJsonSize } from "../job/json-size";
import type { AppendLogsRequest, AppendStepRequest, CompleteManyResult, FailOutcome, FailRequest, Job, ReportProgressRequest, SleepRequest, WaitRequest } from "../job/schemas";
import type { WaitToken } from "../job/handler-contract";
import type { WorkerLogItem } from "../scope/api";
import { groupByHome } from "../job/home";
import type { QueueContext } from "./queue-context";
import { refusalError } from "./refusals";

export class Leases {
  constructor(private readonly q: QueueContext) {}

  async heartbeat(id: string, leaseToken: string, leaseMs: number | undefined): Promise<number> {
    const out = await this.q.scope(this.q.homeOf(id)).heartbeat(id, leaseToken, leaseMs ?? null);
    if (!out.ok) throw refusalError(id, out, "heartbeat");
    return out.leaseExpiresAt;
  }

  async complete(id: string, leaseToken: string, result: object | undefined, version?: string): Promise<Job> {
    const resultJson = result === undefined ? null : JSON.stringify(result);
    if (resultJson !== null) checkJsonSize(resultJson, this.q.config.limits.payloadMaxBytes, "result");
    const out = await this.q.scope(this.q.homeOf(id)).complete(id, leaseToken, resultJson, version ?? null);
    if (!out.ok) throw refusalError(id, out, "complete");
    return out.job;
  }

  /**
   * completeMany: each item as `complete` would answer it, in one call per home (one transaction and one
   * statement there). An item's own problem (a result too large, a lost lease) is its answer, not the call's.
   */
  async completeMany(items: readonly { id: string; leaseToken: string; result?: object; logs?: WorkerLogItem[]; version?: string }[]): Promise<CompleteManyResult["results"]> {
    const answers: CompleteManyResult["results"] = items.map((i) => ({ id: i.id, ok: true as const }));
    const refuse = (k: number, e: unknown) => {
      const q = e instanceof QueueError ? e : new QueueError("internal", String(e));
      answers[k] = { id: items[k]!.id, ok: false, error: { code: q.code, message: q.message } };
    };
    const ready = items.flatMap((item, k) => {
      try {
        const result = item.result === undefined ? null : JSON.stringify(item.result);
        if (result !== null) checkJsonSize(result, this.q.config.limits.payloadMaxBytes, `items[${k}].result`);
        return [{ k, home: this.q.homeOf(item.id), id: item.id, token: item.leaseToken, result, ...(item.logs ? { logs: item.logs } : {}), ...(item.version ? { version: item.version } : {}) }];
      } catch (e) {
        refuse(k, e);
        return [];
      }
    });
    await Promise.all(
      [...groupByHome(ready, (r) => r.home)].map(async ([home, group]) => {
        try {
          const outs = await this.q.scope(home).completeMany(group.map(({ id, token, result, logs, version }) => ({ id, token, result, ...(logs ? { logs } : {}), ...(version ? { version } : {}) })));
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
    const out = await this.q.scope(this.q.homeOf(id)).fail(id, req.leaseToken, {
      error: req.error,
      retryAfterMs: req.retryAfterMs,
      fatal: req.fatal,
      consumesAttempt: req.consumesAttempt,
      ...(req.snooze ? { snooze: true } : {}),
      ...(req.frame === undefined ? {} : { frame: req.frame }),
      ...(req.nondeterminism ? { nondeterminism: true } : {}),
      ...(req.version === undefined ? {} : { version: req.version }),
    });
    if (!out.ok) throw refusalError(id, out, "fail");
    return { job: out.job, outcome: out.outcome };
  }

  async release(id: string, leaseToken: string): Promise<Job> {
    const out = await this.q.scope(this.q.homeOf(id)).release(id, leaseToken);
    if (!out.ok) throw refusalError(id, out, "release");
    return out.job;
  }

  async sleep(id: string, body: SleepRequest): Promise<Job> {
    const { leaseToken, ...input } = body;
    const out = await this.q.scope(this.q.homeOf(id)).sleep(id, leaseToken, input);
    if (!out.ok) throw refusalError(id, out, "put to sleep");
    return out.job;
  }

  /** appendStep: a pull worker's journal write; a wait token's (`op: "token"`) answers the token the queue made. */
  async appendStep(id: string, body: AppendStepRequest): Promise<{ token?: WaitToken; paused?: true }> {
    const result = body.op === "commit" ? JSON.stringify(body.result ?? null) : body.op === "token" ? JSON.stringify({ timeoutMs: body.timeoutMs ?? null }) : body.op === "patch" ? "true" : null;
    if (body.op === "commit") checkJsonSize(result!, this.q.config.limits.payloadMaxBytes, "result");
    const out = await this.q.scope(this.q.homeOf(id)).appendStep({ id, op: body.op, seq: body.seq, name: body.name, result, startedAt: body.startedAt, start: body.start, ...(body.sensitive ? { sensitive: true } : {}) }, body.leaseToken);
    if (!out.ok) throw refusalError(id, out, "journal a step of");
    // `paused`: asked to pause, the worker ends the attempt after this step (scope/jobs/job-pause.ts).
    return { ...(out.result === undefined ? {} : { token: JSON.parse(out.result) as WaitToken }), ...(out.paused ? { paused: out.paused } : {}) };
  }

  /** wait: a pull worker's attempt ends on its waits (docs/workflows.md). */
  async wait(id: string, body: WaitRequest): Promise<Job> {
    const { leaseToken, ...input } = body;
    const out = await this.q.scope(this.q.homeOf(id)).wait(id, leaseToken, input);
    if (!out.ok) throw refusalError(id, out, "wait with");
    return out.job;
  }

  /** appendLogs: a pull worker's lines for its attempt, fenced by its lease; clipped as a pushed handler's are. */
  async appendLogs(id: string, req: AppendLogsRequest): Promise<number> {
    const out = await this.q.scope(this.q.homeOf(id)).appendLogs(id, req.leaseToken, req.items);
    if (!out.ok) throw refusalError(id, out, "logs");
    return out.stored;
  }

  /** progress: a pull worker's ctx.progress, fenced by its lease (scope/watching/progress.ts). */
  async progress(id: string, req: ReportProgressRequest): Promise<number> {
    const out = await this.q.scope(this.q.homeOf(id)).progress(id, req.leaseToken, JSON.stringify(req.progress));
    if (!out.ok) throw refusalError(id, out, "report progress of");
    return out.at;
  }
}
