/**
 * ScheduleDO: cron, fixed-interval and one-shot triggers (DESIGN.md §1). Its
 * alarm is the earliest next slot of any schedule; each fire is an enqueue
 * whose job id names the slot (`schedule:<name>:<generation>:<slot>`), so a slot fires once
 * even if the alarm comes twice or the object dies between enqueue and record.
 * The config's schedules are kept in sync whenever the object starts.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import { Meter, meterRequests } from "../metering/meter";
import { sendUsageWhenIdle, USAGE_CATALOG } from "../metering/usage-sender";
import migrations from "../../migrations/schedule/migrations.js";
import { AlarmArm } from "../alarm-arm";
import { systemClock, type Clock } from "../clock";
import { loadConfig } from "../config/load";
import { lensOf, type Lens } from "../sealing/lens";
import type { QueueConfig } from "../config/schema";
import type { Env } from "../env";
import { migrateStorage } from "../tables/migrate";
import { ownName } from "../object-name";
import { scopeOfRow, prepareJob } from "../scope/api";
import { groupByHome } from "../job/home";
import type { EnqueueRequest } from "../job/schemas";
import {
  deleteSchedule,
  dueSchedules,
  getSchedule,
  listSchedules,
  maxCatchupOf,
  nextScheduleWake,
  putSchedule,
  recordPass,
  setPaused,
  syncConfigSchedules,
  toSchedule,
  type ScheduleRow,
} from "./schedule-store";
import { planFires, triggerOf } from "./slots";
import type { Schedule, ScheduleSpec } from "../job/schedule-spec";

/** The one schedule object; other names (tests) start without the config's schedules. */
export const SCHEDULES_OBJECT = "schedules";
const DUE_BATCH = 100;
const FIRE_CHUNK = 100;

export type PutOutcome = { ok: true; schedule: Schedule; created: boolean } | { ok: false; code: "conflict"; message: string };

export class ScheduleDO extends DurableObject<Env> {
  clock: Clock = systemClock;
  private readonly config: QueueConfig;
  /** A schedule's payload is kept sealed, opened for its fires and shown to readers (sealing/lens.ts). */
  private readonly lens: Lens;
  private readonly alarmArm: AlarmArm;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const meter = Meter.install(this, ctx, "schedule");
    sendUsageWhenIdle(meter, (report) => env.CATALOG.getByName(USAGE_CATALOG).usage(report), (p) => ctx.waitUntil(p), () => this.clock.now());
    this.config = loadConfig(env);
    this.lens = lensOf(env, this.config);
    this.alarmArm = new AlarmArm(ctx.storage);
    void ctx.blockConcurrencyWhile(async () => {
      await meter.setup(() => migrateStorage(ctx.storage, migrations, "schedule"));
      // The kept name, not ctx.id.name: an instance its alarm woke cold is not told its name (object-name.ts).
      if (ownName(ctx) === SCHEDULES_OBJECT) {
        ctx.storage.transactionSync(() => syncConfigSchedules(ctx.storage.sql, this.lens, this.config.schedules, this.clock.now()));
        await this.arm(this.clock.now());
      }
    });
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /** sync: nothing to do beyond starting — the constructor syncs the config (the coordinator calls this once per isolate). */
  async sync(): Promise<void> {}

  async put(name: string, spec: ScheduleSpec): Promise<PutOutcome> {
    const now = this.clock.now();
    const existing = getSchedule(this.sql, name);
    if (existing?.source === "config") return { ok: false, code: "conflict", message: `schedule ${name} is declared in the config; change it there` };
    const { row, created } = this.ctx.storage.transactionSync(() => putSchedule(this.sql, this.lens, name, spec, "api", now));
    await this.arm(now);
    return { ok: true, schedule: toSchedule(row, this.lens), created };
  }

  /** setPaused: pause or resume an API schedule in place (a config schedule changes in the config). */
  async setPaused(name: string, paused: boolean): Promise<{ ok: true; schedule: Schedule } | { ok: false; code: "not_found" | "conflict"; message: string }> {
    const now = this.clock.now();
    const existing = getSchedule(this.sql, name);
    if (!existing) return { ok: false, code: "not_found", message: `no schedule named ${name}` };
    if (existing.source === "config") return { ok: false, code: "conflict", message: `schedule ${name} is declared in the config; change it there` };
    const row = this.ctx.storage.transactionSync(() => setPaused(this.sql, existing, paused, "api", now));
    await this.arm(now);
    return { ok: true, schedule: toSchedule(row, this.lens) };
  }

  async get(name: string): Promise<Schedule | null> {
    const row = getSchedule(this.sql, name);
    return row ? toSchedule(row, this.lens) : null;
  }

  async list(): Promise<Schedule[]> {
    return listSchedules(this.sql).map((r) => toSchedule(r, this.lens));
  }

  async remove(name: string): Promise<{ ok: true } | { ok: false; code: "not_found" | "conflict"; message: string }> {
    const existing = getSchedule(this.sql, name);
    if (!existing) return { ok: false, code: "not_found", message: `no schedule named ${name}` };
    if (existing.source === "config") return { ok: false, code: "conflict", message: `schedule ${name} is declared in the config; remove it there` };
    deleteSchedule(this.sql, name);
    await this.arm(this.clock.now());
    return { ok: true };
  }

  override async alarm(): Promise<void> {
    const now = this.clock.now();
    this.alarmArm.consumed();
    let failed = false;
    let more = false;
    try {
      const due = dueSchedules(this.sql, now, DUE_BATCH);
      more = due.length === DUE_BATCH;
      for (const row of due) {
        // One schedule that cannot fire (its type's home refuses, a payload too large) must not hold the others back.
        try {
          await this.fire(row, now);
        } catch (e) {
          failed = true;
          console.error(JSON.stringify({ event: "schedule:fire_failed", schedule: row.name, error: String(e) }));
        }
      }
    } catch (e) {
      failed = true;
      console.error(JSON.stringify({ event: "schedule:alarm_failed", error: String(e) }));
    }
    // A failed pass comes back within ALARM_RETRY_MS, a full one within ALARM_AGAIN_MS, never for "now" (alarm-arm.ts).
    await this.alarmArm.setAfterPass(nextScheduleWake(this.sql), now, { failed, more });
  }

  /**
   * fire one schedule's due slots: enqueue first (idempotent by the slot's job
   * id), then record — so a crash in between fires the same slots again, which
   * changes nothing.
   */
  private readonly fire = async (row: ScheduleRow, now: number): Promise<void> => {
    const trigger = triggerOf({ cron: row.cron, tz: row.tz, everyMs: row.every_ms, at: row.at, anchor: row.anchor });
    const plan = planFires(trigger, row.next_run_at, now, row.misfire, maxCatchupOf(row));
    if (plan.skipped > 0) {
      console.warn(
        JSON.stringify({ event: "schedule:catchup_skipped", schedule: row.name, skipped: plan.skipped, oldestSkipped: plan.oldestSkipped, kept: plan.fire.length }),
      );
    }
    const prepared: ReturnType<typeof prepareJob>[] = [];
    // Parsed once per pass, not per slot: a stored payload that is not JSON fails this schedule here, before any job carries it.
    const text = this.lens.openText(row.payload);
    const payload = JSON.parse(text) as EnqueueRequest["payload"];
    for (const slot of plan.fire) {
      const body = { type: row.type, payload, scope: scopeOfRow(row) ?? undefined, id: `schedule:${row.name}:${row.generation}:${slot}` };
      try {
        prepared.push(prepareJob(this.config, body, text, now, slot));
      } catch (e) {
        // Its type's keyed limits find no key in the payload (docs/guards.md "Keyed limits"): the slot is not fired.
        console.error(JSON.stringify({ event: "schedule:enqueue_refused", schedule: row.name, message: String((e as Error).message ?? e) }));
      }
    }
    for (const [home, group] of groupByHome(prepared, (p) => p.home)) {
      const jobs = group.map((p) => p.job);
      // A catch-up can be many slots: bounded calls, well under the RPC size limit.
      for (let i = 0; i < jobs.length; i += FIRE_CHUNK) {
        const out = await this.env.SCOPE.getByName(home).enqueue(jobs.slice(i, i + FIRE_CHUNK));
        if (!out.ok) console.error(JSON.stringify({ event: "schedule:enqueue_refused", schedule: row.name, message: out.message }));
      }
    }
    recordPass(this.sql, row.name, row.generation, plan.nextRunAt, plan.fire.at(-1) ?? null, now);
  };

  /** arm: the alarm on the next due slot. Fields, not methods: every method is a request (meterRequests). */
  private readonly arm = async (now: number): Promise<void> => {
    const at = nextScheduleWake(this.sql);
    await this.alarmArm.set(at === null ? null : Math.max(at, now));
  };
}

meterRequests(ScheduleDO);
