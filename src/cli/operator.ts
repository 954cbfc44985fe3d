/**
 * The operator commands: jobs, dead, types, stats, enqueue, signal, schedules,
 * pools, errors and tail — each a call of the package's own HTTP client, printed as JSON
 * with `--json` or as a table for people (docs/operating.md "The operator CLI").
 *
 * @module
 */
import type { Command } from "commander";
import type { HttpQueueClient } from "../client/http-client";
import { createQueueEvents } from "../client/queue-events";
import type { Job } from "../job/schemas";
import { filterOf, filterOptions, runBulk } from "./bulk";
import { int, jsonObject, scopeOf, table, UsageError, when } from "./output";
import { signalCommand } from "./signal";
import { rerunCommand } from "./rerun";
import { errorsCommand } from "./errors";
import { auditCommand } from "./tokens";
import { budgetsCommand } from "./budgets";

export interface Io {
  out(s: string): void;
  /** Warnings (stderr): what a person should know though the command did its work. */
  err(s: string): void;
  client(): HttpQueueClient;
  json(): boolean;
  /** tail's pause between polls; tests pass a short one. */
  sleep(ms: number): Promise<void>;
  /** The fetch the client uses, for tail's event streams (tests route it to their queue). */
  fetch?: typeof fetch;
}

const jobRows = (items: Job[]) =>
  table(
    ["ID", "TYPE", "STATE", "ATTEMPTS", "RUN AT", "UPDATED", "ERROR"],
    items.map((j) => [j.id, j.type, j.state, `${j.attempts}/${j.maxAttempts}`, when(j.runAt), when(j.updatedAt), j.lastError?.slice(0, 60) ?? null]),
  );

/** limitOrNull: a pool limit, or "null" to return to the configured value (kept as the text: commander drops a null). */
function limitOrNull(name: string) {
  return (v: string) => (v === "null" ? "null" : int(name)(v));
}
const nullable = (v: number | "null" | undefined) => (v === "null" ? null : v);

export function operatorCommands(program: Command, io: Io): void {
  const print = (body: unknown, human: () => string) => io.out(`${io.json() ? JSON.stringify(body, null, 2) : human()}\n`);

  const jobs = program.command("jobs").description("list, read, cancel, retry, pause and resume jobs");
  jobs
    .command("list")
    .description("jobs in enqueue order, filtered")
    .option("--type <types>", "a type, or several separated by commas")
    .option("--state <states>", "pending, running, completed, failed, cancelled (commas for several)")
    .option("--scope <type:id>", "the jobs of one scope")
    .option("--key <dedupeKey>", "the jobs of one dedupe key")
    .option("--tag <tag>", "jobs with this tag")
    .option("--limit <n>", "at most this many (1-500)", int("--limit"))
    .option("--cursor <cursor>", "go on from a previous page's nextCursor")
    .action(async (o) => {
      const scope = scopeOf(o.scope);
      const r = await io.client().list({ type: o.type, state: o.state, scopeType: scope?.type, scopeId: scope?.id, dedupeKey: o.key, tag: o.tag, limit: o.limit, cursor: o.cursor });
      print(r, () => `${jobRows(r.items)}${r.nextCursor ? `\n(more: --cursor ${r.nextCursor})` : ""}`);
    });
  jobs
    .command("get <id>")
    .description("one job, with its payload, result and error; by the id you gave it at enqueue with --type or --scope")
    .option("--type <type>", "the job's type, when <id> is the id you gave it at enqueue (an unscoped job)")
    .option("--scope <type:id>", "the job's scope, when <id> is the id you gave it at enqueue")
    .action(async (id: string, o: { type?: string; scope?: string }) => {
      const scope = scopeOf(o.scope);
      const where = scope ? { scopeType: scope.type, scopeId: scope.id } : o.type !== undefined ? { type: o.type } : undefined;
      const j = await io.client().get(id, where);
      print({ job: j }, () =>
        [
          `${j.id}  ${j.type}  ${j.state}`,
          `attempts     ${j.attempts}/${j.maxAttempts}`,
          `scope        ${j.scope ? `${j.scope.type}:${j.scope.id}` : "-"}`,
          `dedupe key   ${j.dedupeKey ?? "-"}`,
          `created      ${when(j.createdAt)}`,
          `run at       ${when(j.runAt)}`,
          `finished     ${when(j.finishedAt)}`,
          ...(j.expiresAt != null ? [`expires      ${when(j.expiresAt)} (if not started by then)`] : []),
          `payload      ${JSON.stringify(j.payload)}`,
          `result       ${j.result === null ? "-" : JSON.stringify(j.result)}`,
          `error        ${j.lastError ?? "-"}`,
        ].join("\n"),
      );
    });
  filterOptions(
    jobs
      .command("cancel [id]")
      .description("cancel a job (a running one is aborted), or every pending, running or waiting job of a filter")
      .option("--reason <text>", "kept with the job"),
  ).action(async (id: string | undefined, o) => {
    if (id !== undefined) {
      const j = await io.client().cancel(id, o.reason);
      print({ job: j }, () => `${j.id}  ${j.state}`);
      return;
    }
    const r = await runBulk(io.client(), "cancel", filterOf(o, scopeOf(o.scope)), o);
    print(r.body, () => r.text);
  });
  filterOptions(
    jobs.command("retry [id]").description("a failed, cancelled, superseded or expired job back to pending, due now — or every such job of a filter"),
  ).action(async (id: string | undefined, o) => {
    if (id !== undefined) {
      const j = await io.client().retryJob(id);
      print({ job: j }, () => `${j.id}  ${j.state}`);
      return;
    }
    const r = await runBulk(io.client(), "retry", filterOf(o, scopeOf(o.scope)), o);
    print(r.body, () => r.text);
  });

  // One job paused and resumed (docs/http-api.md "Pause and resume one job"); `types pause` pauses a whole type.
  jobs
    .command("pause <id>")
    .description("pause one job: a pending one at once, a running one at its next step, a waiting one when its waits end")
    .action(async (id: string) => {
      const j = await io.client().pauseJob(id);
      const paused = j.waitingFor?.some((w) => w.kind === "pause") && j.state === "waiting";
      print({ job: j }, () => `${j.id}  ${paused ? "paused" : `${j.state}, pausing at its next step`}`);
    });
  jobs
    .command("resume <id>")
    .description("resume a paused job: pending again at the time it was due (or withdraw a pause a running job was asked)")
    .action(async (id: string) => {
      const j = await io.client().resumeJob(id);
      print({ job: j }, () => `${j.id}  ${j.state}`);
    });

  rerunCommand(jobs, io);
  errorsCommand(program, io);
  auditCommand(program, io);
  budgetsCommand(program, io);

  const dead = program.command("dead").description("failed jobs (the dead-letter set), and quarantined event deliveries");
  dead
    .command("list")
    .description("failed jobs; with --topic, a topic's quarantined deliveries")
    .option("--type <types>", "failed jobs of these types")
    .option("--topic <topic>", "a topic's quarantined deliveries instead")
    .option("--limit <n>", "at most this many", int("--limit"))
    .action(async (o) => {
      if (o.topic) {
        const r = await io.client().listDead(o.topic, { limit: o.limit });
        print(r, () => table(["EVENT", "CONSUMER", "ATTEMPTS", "AT", "JOB", "ERROR"], r.items.map((d) => [d.eventId, d.consumer, d.attempts, when(d.at), d.jobId, d.error?.slice(0, 60)])));
        return;
      }
      const r = await io.client().list({ state: "failed", type: o.type, limit: o.limit });
      print(r, () => jobRows(r.items));
    });
  dead
    .command("retry")
    .description("every failed job of a type and/or scope back to pending")
    .option("--type <type>", "only this type")
    .option("--scope <type:id>", "only this scope")
    .action(async (o) => {
      const scope = scopeOf(o.scope);
      const r = await io.client().retryFailed({ type: o.type, scopeType: scope?.type, scopeId: scope?.id });
      print(r, () => `retried ${r.retried}${r.skipped ? `, skipped ${r.skipped}` : ""}`);
    });

  const types = program.command("types").description("job types: list, pause, resume");
  types
    .command("list")
    .description("every declared type and any other the queue has seen, with its counts")
    .action(async () => {
      const r = await io.client().types();
      print(r, () =>
        table(
          ["TYPE", "PUSHED", "DECLARED", "PAUSED", "PENDING", "RUNNING", "FAILED"],
          r.items.map((t) => [t.type, t.pushed ? "yes" : "no", t.declared ? "yes" : "no", t.paused ? "yes" : "no", t.counts.pending, t.counts.running, t.counts.failed]),
        ),
      );
    });
  for (const [verb, call] of [
    ["pause", (c: HttpQueueClient, t: string) => c.pauseType(t)],
    ["resume", (c: HttpQueueClient, t: string) => c.resumeType(t)],
  ] as const) {
    types
      .command(`${verb} <type>`)
      .description(verb === "pause" ? "stop dispatching and claiming a type (enqueues still land; running jobs finish)" : "dispatch and claim a paused type again")
      .action(async (type: string) => {
        const r = await call(io.client(), type);
        print(r, () => `${r.type}  ${r.paused ? "paused" : "resumed"}${r.unreached ? ` (${r.unreached} objects told later)` : ""}`);
      });
  }

  program
    .command("stats")
    .description("counts by state, per type")
    .option("--type <type>", "one type")
    .action(async (o) => {
      const r = await io.client().stats(o.type);
      print(r, () => JSON.stringify(r, null, 2));
    });

  program
    .command("enqueue <type> [payload]")
    .description("enqueue a job; payload is a JSON object (default {})")
    .option("--delay <ms>", "run no sooner than this many ms from now", int("--delay"))
    .option("--key <dedupeKey>", "deduplicate: one live job per key")
    .option("--scope <type:id>", "the job's scope")
    .option("--priority <n>", "higher runs first", int("--priority"))
    .option("--id <id>", "the job's id (idempotent)")
    .action(async (type: string, payload: string | undefined, o) => {
      const parsed = payload === undefined ? {} : jsonObject("payload", payload);
      const r = await io.client().enqueue({ type, payload: parsed as never, delayMs: o.delay, dedupeKey: o.key, scope: scopeOf(o.scope), priority: o.priority, id: o.id });
      print(r, () => `${r.id}  ${r.created ? "created" : "already there"}${r.job ? `  ${r.job.state}` : ""}`);
    });

  signalCommand(program, io);

  const schedules = program.command("schedules").description("cron and interval schedules");
  schedules
    .command("list")
    .description("every schedule, with its next run and last fire")
    .action(async () => {
      const r = await io.client().listSchedules();
      print(r, () =>
        table(
          ["NAME", "TYPE", "WHEN", "SOURCE", "PAUSED", "NEXT RUN", "LAST FIRED"],
          r.items.map((s) => [s.name, s.type, s.cron ?? (s.everyMs !== null ? `every ${s.everyMs} ms` : `at ${when(s.at)}`), s.source, s.paused ? "yes" : "no", when(s.nextRunAt), when(s.lastFiredAt)]),
        ),
      );
    });

  const pools = program.command("pools").description("shared concurrency and rate pools");
  pools
    .command("list")
    .description("limits in force, occupancy, spend in the current window")
    .action(async () => {
      const r = await io.client().listPools();
      print(r, () =>
        table(
          ["POOL", "TYPES", "CONCURRENCY", "ACTIVE", "RATE/MIN", "SPENT", "WAITING"],
          r.pools.map((p) => [p.name, p.types.join(","), p.limits.concurrency, p.active, p.limits.ratePerMinute, p.window.spent, p.waiting.length]),
        ),
      );
    });
  pools
    .command("set <name>")
    .description('resize a pool at runtime ("null" returns a limit to the configured value)')
    .option("--concurrency <n>", "most cost units running at once", limitOrNull("--concurrency"))
    .option("--rate <n>", "most rate units per minute", limitOrNull("--rate"))
    .action(async (name: string, o) => {
      if (o.concurrency === undefined && o.rate === undefined) throw new UsageError("pools set: give --concurrency, --rate, or both");
      const r = await io.client().setPoolLimits(name, { concurrency: nullable(o.concurrency), ratePerMinute: nullable(o.rate) });
      print(r, () => `${r.name}  concurrency ${r.limits.concurrency ?? "-"}  rate/min ${r.limits.ratePerMinute ?? "-"}`);
    });

  program
    .command("tail")
    .description("follow the queue: each failure as it happens, with its error, and lifecycle counts per type as they change")
    .option("--type <type>", "one type")
    .option("--interval <ms>", "how often to print the counts and look for objects with new jobs (default 2000)", int("--interval"))
    .option("--count <n>", "stop after this many looks (default: until interrupted)", int("--count"))
    .action(async (o) => {
      const interval = o.interval ?? 2000;
      // Every failure, live: a subscription per object holding the type's jobs (client/queue-events.ts), not the
      // counters, which are a second behind, nor a listing's first page.
      const events = createQueueEvents(io.client(), { ...(o.type ? { type: o.type } : {}), refreshMs: interval, results: false, ...(io.fetch ? { fetch: io.fetch } : {}) });
      events.on("failed", (e) => {
        const j = e.job!;
        if (io.json()) io.out(`${JSON.stringify({ at: j.finishedAt, event: "job:failed", id: j.id, type: j.type, error: j.lastError, failureKind: j.failureKind })}\n`);
        else io.out(`${when(j.finishedAt)}  ${j.type}  failed  ${j.id}  ${j.failureKind ?? ""}  ${j.lastError ?? ""}\n`);
      });
      try {
        await events.ready;
        let seen: Map<string, Record<string, number>> | null = null;
        for (let look = 0; o.count === undefined || look < o.count; look++) {
          if (look > 0) await io.sleep(interval);
          const m = await io.client().metrics({ type: o.type, minutes: 1 });
          const next = new Map(m.types.map((t) => [t.type, t.totals as Record<string, number>]));
          if (seen) {
            for (const [type, totals] of next) {
              const before = seen.get(type) ?? {};
              const changes = Object.entries(totals).filter(([k, v]) => v > (before[k] ?? 0)).map(([k, v]) => ({ event: k, delta: v - (before[k] ?? 0) }));
              if (changes.length === 0) continue;
              if (io.json()) io.out(`${JSON.stringify({ at: m.at, type, ...Object.fromEntries(changes.map((c) => [c.event, c.delta])) })}\n`);
              else io.out(`${when(m.at)}  ${type}  ${changes.map((c) => `${c.event} +${c.delta}`).join("  ")}\n`);
            }
          }
          seen = next;
        }
      } finally {
        events.close();
      }
    });
}
