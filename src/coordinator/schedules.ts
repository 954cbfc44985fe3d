/**
 * Schedules over the API: the one ScheduleDO holds them all. And the wake-up
 * that makes a deploy's config schedules take effect without an API call.
 *
 * @module
 */
import { describeJurisdiction, jurisdictionOfScope } from "../config/residency";
import { requireDeclared } from "../config/known-types";
import { limitKeyFor } from "../scope/api";
import type { QueueConfig } from "../config/schema";
import type { Env } from "../env";
import { loadConfig } from "../config/load";
import { QueueError } from "../errors";
import { checkJsonSize } from "../job/json-size";
import { SCHEDULES_OBJECT, type ScheduleDO } from "../schedule/schedule-do";
import type { ObjectMethods } from "../stubs";
import type { Schedule, ScheduleSpec } from "../job/schedule-spec";

/** The schedule object's methods as a caller holds them, derived from its class (the generated stub type is too deep for TypeScript here). */
type ScheduleApi = ObjectMethods<ScheduleDO>;

export class Schedules {
  constructor(
    private readonly env: Env,
    private readonly config: QueueConfig,
  ) {}

  private object(): ScheduleApi {
    return this.env.SCHEDULE.getByName(SCHEDULES_OBJECT) as unknown as ScheduleApi;
  }

  async put(name: string, spec: ScheduleSpec): Promise<{ schedule: Schedule; created: boolean }> {
    requireDeclared(this.config, [spec.type], () => "type");
    // Every fire stores this payload: it is held to the enqueue limit here, once.
    checkJsonSize(JSON.stringify(spec.payload ?? {}), this.config.limits.payloadMaxBytes, "payload");
    // And each fire is counted under its type's limit key: a payload without one is refused now, not at every fire.
    limitKeyFor(this.config, { type: spec.type, payload: spec.payload ?? {}, scope: spec.scope });
    // The schedules' object lives in the queue's jurisdiction and stores the payload (src/residency.ts).
    if (jurisdictionOfScope(this.config, spec.scope) !== this.config.residency.jurisdiction) {
      throw new QueueError("invalid_request", `scope: scope type ${spec.scope!.type} lives in ${describeJurisdiction(jurisdictionOfScope(this.config, spec.scope))} and the schedules' object in ${describeJurisdiction(this.config.residency.jurisdiction)}, which would hold its payload (docs/operating.md "Data residency")`, { path: "scope" });
    }
    const out = await this.object().put(name, spec);
    if (!out.ok) throw new QueueError("conflict", out.message);
    return { schedule: out.schedule, created: out.created };
  }

  async list(): Promise<Schedule[]> {
    return this.object().list();
  }

  async get(name: string): Promise<Schedule> {
    const s = await this.object().get(name);
    if (!s) throw new QueueError("not_found", `no schedule named ${name}`);
    return s;
  }

  /** setPaused: pause or resume an API schedule in place; a config schedule is refused as conflict. */
  async setPaused(name: string, paused: boolean): Promise<Schedule> {
    const out = await this.object().setPaused(name, paused);
    if (!out.ok) throw new QueueError(out.code, out.message);
    return out.schedule;
  }

  async remove(name: string): Promise<void> {
    const out = await this.object().remove(name);
    if (!out.ok) throw new QueueError(out.code, out.message);
  }
}

let schedulesWoken = false;

/**
 * wakeSchedules: once per isolate, start the schedule object, which syncs the
 * config's schedules when it starts — so a deploy that adds one takes effect
 * on the first request, without waiting for anyone to call the schedule API.
 */
export function wakeSchedules(env: Env, keepAlive: (p: Promise<unknown>) => void): void {
  if (schedulesWoken || Object.keys(loadConfig(env).schedules).length === 0) return;
  schedulesWoken = true;
  keepAlive(
    env.SCHEDULE.getByName(SCHEDULES_OBJECT)
      .sync()
      .catch((e: unknown) => {
        schedulesWoken = false;
        console.error(JSON.stringify({ event: "schedule:wake_failed", error: String(e) }));
      }),
  );
}
