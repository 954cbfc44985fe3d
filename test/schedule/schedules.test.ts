/**
 * Schedules with an injected clock: the grid, one-shots, every misfire policy
 * after a simulated outage, and no double fire on a duplicated alarm. Fired
 * jobs land in real scope objects; a pull-only type keeps them waiting there.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock";
import { jobIdFor, typeHome } from "../../src/job/home";
import type { ScheduleDO } from "../../src/schedule/schedule-do";
import type { ScheduleSpec } from "../../src/job/schedule-spec";
import type { ScopeDO } from "../../src/scope/scope-do";
import { api, isTerminal, uniqueType, waitForJob } from "../helpers/api";
import { env, T0 } from "../helpers/scope";

const MIN = 60_000;

async function freshSchedules() {
  const stub = env.SCHEDULE.getByName(`schedules-test-${crypto.randomUUID()}`);
  const clock = new ManualClock(T0);
  await runInDurableObject(stub, (o: ScheduleDO) => {
    o.clock = clock;
  });
  return { stub, clock };
}

const slotJobId = (type: string, name: string, slot: number, generation = 1) => jobIdFor(typeHome(type, 0).name, `schedule:${name}:${generation}:${slot}`);

async function fired(type: string, name: string, slots: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const slot of slots) {
    const r = await api("GET", `/v1/jobs/${slotJobId(type, name, slot)}`);
    if (r.status === 200) {
      expect(r.body.job.scheduledFor).toBe(slot);
      out.push(slot);
    }
  }
  return out;
}

async function jobCount(type: string): Promise<number> {
  return runInDurableObject(env.SCOPE.getByName(typeHome(type, 0).name), (_o: ScopeDO, state) =>
    state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM job WHERE type = ?", type).one().n,
  );
}

async function put(stub: DurableObjectStub<ScheduleDO>, name: string, spec: ScheduleSpec) {
  const out = await stub.put(name, spec);
  if (!out.ok) throw new Error(out.message);
  return out.schedule;
}

describe("schedule triggers", () => {
  it("everyMs stays on its grid: a late alarm fires the slot it was for, and the next slot does not move", async () => {
    const { stub, clock } = await freshSchedules();
    const type = uniqueType("sched");
    const s = await put(stub, "grid", { type, everyMs: MIN });
    expect(s.nextRunAt).toBe(T0 + MIN);
    clock.set(T0 + MIN + 3_000); // three seconds late
    await runDurableObjectAlarm(stub);
    expect(await fired(type, "grid", [T0 + MIN])).toEqual([T0 + MIN]);
    expect((await stub.get("grid"))!).toMatchObject({ lastFiredAt: T0 + MIN, nextRunAt: T0 + 2 * MIN });
  });

  it("cron fires at its slots (UTC), and at fires once", async () => {
    const { stub, clock } = await freshSchedules();
    const type = uniqueType("sched");
    expect((await put(stub, "quarter", { type, cron: "*/15 * * * *" })).nextRunAt).toBe(T0 + 15 * MIN);
    expect((await put(stub, "once", { type, at: T0 + 5 * MIN })).nextRunAt).toBe(T0 + 5 * MIN);
    clock.set(T0 + 5 * MIN);
    await runDurableObjectAlarm(stub);
    clock.set(T0 + 15 * MIN);
    await runDurableObjectAlarm(stub);
    expect(await fired(type, "once", [T0 + 5 * MIN])).toHaveLength(1);
    expect(await fired(type, "quarter", [T0 + 15 * MIN])).toHaveLength(1);
    expect((await stub.get("once"))!.nextRunAt).toBeNull();
    expect(await runInDurableObject(stub, (_o: ScheduleDO, state) => state.storage.getAlarm())).toBe(T0 + 30 * MIN);
  });

  it("cron with a time zone fires at the local time, across the night the clocks go forward; the view says both times", async () => {
    const berlinMorning = Date.UTC(2026, 2, 27, 12); // Friday noon UTC, 2026-03-27: the clocks go forward on Sunday
    const stub = env.SCHEDULE.getByName(`schedules-test-${crypto.randomUUID()}`);
    const clock = new ManualClock(berlinMorning);
    await runInDurableObject(stub, (o: ScheduleDO) => void (o.clock = clock));
    const type = uniqueType("sched");
    const s = await put(stub, "nightly", { type, cron: "30 2 * * *", tz: "Europe/Berlin" });
    // 02:30 in Berlin on Saturday is 01:30 UTC (winter time).
    expect(s).toMatchObject({ tz: "Europe/Berlin", nextRunAt: Date.UTC(2026, 2, 28, 1, 30), nextRunAtLocal: "2026-03-28T02:30:00+01:00" });
    clock.set(Date.UTC(2026, 2, 28, 1, 30));
    await runDurableObjectAlarm(stub);
    expect(await fired(type, "nightly", [Date.UTC(2026, 2, 28, 1, 30)])).toHaveLength(1);
    // Sunday has no 02:30 in Berlin: the slot is 03:00 summer time, 01:00 UTC.
    expect((await stub.get("nightly"))!).toMatchObject({ nextRunAt: Date.UTC(2026, 2, 29, 1, 0), nextRunAtLocal: "2026-03-29T03:00:00+02:00" });
    clock.set(Date.UTC(2026, 2, 29, 1, 0));
    await runDurableObjectAlarm(stub);
    expect(await fired(type, "nightly", [Date.UTC(2026, 2, 29, 1, 0)])).toHaveLength(1);
    expect((await stub.get("nightly"))!).toMatchObject({ nextRunAt: Date.UTC(2026, 2, 30, 0, 30), nextRunAtLocal: "2026-03-30T02:30:00+02:00" });
    // A schedule without tz is UTC, as before.
    expect(await put(stub, "utc", { type, cron: "0 3 * * *" })).toMatchObject({ tz: "UTC", nextRunAtLocal: "2026-03-29T03:00:00+00:00" });
  });

  it("a duplicated alarm fires a slot once", async () => {
    const { stub, clock } = await freshSchedules();
    const type = uniqueType("sched");
    await put(stub, "dup", { type, everyMs: MIN });
    clock.set(T0 + MIN);
    await runDurableObjectAlarm(stub);
    await runInDurableObject(stub, (o: ScheduleDO) => o.alarm()); // delivered again
    await runInDurableObject(stub, (o: ScheduleDO) => o.alarm());
    expect(await jobCount(type)).toBe(1);
  });

  it("a paused schedule does not fire; resuming starts from its next slot (a pause is not downtime)", async () => {
    const { stub, clock } = await freshSchedules();
    const type = uniqueType("sched");
    await put(stub, "p", { type, everyMs: MIN, paused: true, misfire: "catchup" });
    clock.set(T0 + 3 * MIN + 10_000);
    await runInDurableObject(stub, (o: ScheduleDO) => o.alarm());
    expect(await jobCount(type)).toBe(0);
    expect((await put(stub, "p", { type, everyMs: MIN, paused: false, misfire: "catchup" })).nextRunAt).toBe(T0 + 4 * MIN);
    await runInDurableObject(stub, (o: ScheduleDO) => o.alarm());
    expect(await jobCount(type)).toBe(0);
  });

  it("a replaced schedule fires again, even for a slot its old self fired (a new generation)", async () => {
    const { stub, clock } = await freshSchedules();
    const type = uniqueType("sched");
    await put(stub, "once", { type, at: T0 + MIN, payload: { v: 1 } });
    clock.set(T0 + MIN);
    await runDurableObjectAlarm(stub);
    await put(stub, "once", { type, at: T0 + MIN, payload: { v: 2 } });
    await runInDurableObject(stub, (o: ScheduleDO) => o.alarm());
    expect(await jobCount(type)).toBe(2);
    const second = await api("GET", `/v1/jobs/${slotJobId(type, "once", T0 + MIN, 2)}`);
    expect(second.body.job.payload).toEqual({ v: 2 });
  });

  it("one schedule that cannot fire does not hold the others back", async () => {
    const { stub, clock } = await freshSchedules();
    const good = uniqueType("sched");
    await put(stub, "a-bad", { type: "quick.retry", everyMs: MIN });
    await put(stub, "b-good", { type: good, everyMs: MIN });
    // Break the first schedule's stored payload so its fire throws.
    await runInDurableObject(stub, (_o: ScheduleDO, state) => state.storage.sql.exec("UPDATE schedule SET payload = '{not json' WHERE name = 'a-bad'"));
    clock.set(T0 + MIN);
    await runDurableObjectAlarm(stub);
    expect(await fired(good, "b-good", [T0 + MIN])).toEqual([T0 + MIN]);
    expect(await runInDurableObject(stub, (_o: ScheduleDO, state) => state.storage.getAlarm())).toBe(T0 + MIN + 5_000);
  });
});

describe("misfire after an outage (slots at +1…+10 minutes, the object asleep until +10m30s)", () => {
  const slots = Array.from({ length: 10 }, (_, i) => T0 + (i + 1) * MIN);
  const outage = async (spec: Partial<ScheduleSpec>) => {
    const { stub, clock } = await freshSchedules();
    const type = uniqueType("misfire");
    await put(stub, "m", { type, everyMs: MIN, ...spec });
    clock.set(T0 + 10 * MIN + 30_000);
    await runDurableObjectAlarm(stub);
    return { type, stub, got: await fired(type, "m", slots) };
  };

  it("latest (default): the last missed slot, once", async () => {
    expect((await outage({})).got).toEqual([T0 + 10 * MIN]);
  });

  it("earliest: the oldest missed slot, once", async () => {
    expect((await outage({ misfire: "earliest" })).got).toEqual([T0 + MIN]);
  });

  it("none: no missed slot (the last one is 30 s late — on time — so it runs; an older outage runs nothing)", async () => {
    expect((await outage({ misfire: "none" })).got).toEqual([T0 + 10 * MIN]);
    const { stub, clock } = await freshSchedules();
    const type = uniqueType("misfire");
    await put(stub, "m", { type, everyMs: 5 * MIN, misfire: "none" });
    clock.set(T0 + 10 * MIN + 90_000); // slots at +5m and +10m; the last is 90 s late: missed
    await runDurableObjectAlarm(stub);
    expect(await fired(type, "m", [T0 + 5 * MIN, T0 + 10 * MIN])).toEqual([]);
    expect((await stub.get("m"))!.nextRunAt).toBe(T0 + 15 * MIN); // back on the grid
  });

  it("catchup: every missed slot, oldest first", async () => {
    const { got } = await outage({ misfire: "catchup" });
    expect(got).toEqual(slots);
  });

  it("catchup with maxCatchup: the latest n, and one warning naming how many were skipped", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const { got } = await outage({ misfire: "catchup", maxCatchup: 3 });
      expect(got).toEqual(slots.slice(7));
      const lines = warn.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("schedule:catchup_skipped"));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ schedule: "m", skipped: 7, oldestSkipped: T0 + MIN, kept: 3 });
    } finally {
      warn.mockRestore();
    }
  });
});

describe("schedules over the API", () => {
  it("PUT creates (201) and replaces (200); GET lists and reads; DELETE removes", async () => {
    const name = `api-${crypto.randomUUID().slice(0, 8)}`;
    const created = await api("PUT", `/v1/schedules/${name}`, { type: "report.daily", cron: "0 3 * * *", payload: { k: 1 } });
    expect(created.status).toBe(201);
    expect(created.body.schedule).toMatchObject({ name, cron: "0 3 * * *", misfire: "latest", source: "api", paused: false, lastFiredAt: null });
    expect(created.body.schedule.nextRunAt % 86_400_000).toBe(3 * 3_600_000);
    const replaced = await api("PUT", `/v1/schedules/${name}`, { type: "report.daily", everyMs: 3_600_000 });
    expect(replaced.status).toBe(200);
    expect(replaced.body.schedule).toMatchObject({ cron: null, everyMs: 3_600_000 });
    expect((await api("GET", "/v1/schedules")).body.items.map((s: any) => s.name)).toContain(name);
    expect((await api("GET", `/v1/schedules/${name}`)).body.schedule.name).toBe(name);
    expect((await api("DELETE", `/v1/schedules/${name}`)).body).toEqual({ deleted: true });
    expect((await api("GET", `/v1/schedules/${name}`)).status).toBe(404);
    expect((await api("DELETE", `/v1/schedules/${name}`)).status).toBe(404);
  });

  it.each([
    [{ type: "t", cron: "61 * * * *" }, "cron"],
    [{ type: "t", cron: "* * * * *", everyMs: 60_000 }, "everyMs"],
    [{ type: "t" }, "cron"],
    [{ type: "t", everyMs: 10 }, "everyMs"],
    [{ type: "t", at: 1, misfire: "sometimes" }, "misfire"],
    [{ type: "t", at: 1, maxCatchup: 5 }, "maxCatchup"],
    [{ type: "t", cron: "0 3 * * *", tz: "Mars/Base" }, "tz"],
    [{ type: "t", everyMs: 60_000, tz: "Europe/Berlin" }, "tz"],
  ])("refuses %j naming %s", async (body, field) => {
    const r = await api("PUT", "/v1/schedules/bad", body);
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: any) => d.path)).toContain(field);
  });

  it("refuses a payload over the enqueue limit (every fire would store it) and writes nothing", async () => {
    const name = `big-${crypto.randomUUID().slice(0, 8)}`;
    const r = await api("PUT", `/v1/schedules/${name}`, { type: "t", everyMs: 60_000, payload: { blob: "x".repeat(140_000) } });
    expect(r.status).toBe(413);
    expect(r.body.error).toMatchObject({ code: "payload_too_large", details: { path: "payload" } });
    expect((await api("GET", `/v1/schedules/${name}`)).status).toBe(404);
  });

  it("config schedules are synced on start and cannot be changed over the API", async () => {
    const list = (await api("GET", "/v1/schedules")).body.items;
    expect(list.find((s: any) => s.name === "demo-every-5-minutes")).toMatchObject({ source: "config", type: "demo.tick", cron: "*/5 * * * *" });
    expect((await api("PUT", "/v1/schedules/demo-every-5-minutes", { type: "demo.tick", everyMs: 60_000 })).status).toBe(409);
    expect((await api("DELETE", "/v1/schedules/demo-every-5-minutes")).status).toBe(409);
  });

  it("the handler gets ctx.scheduledFor: the slot, not the time it ran", async () => {
    const name = `tick-${crypto.randomUUID().slice(0, 8)}`;
    const at = Date.now() + 200;
    await api("PUT", `/v1/schedules/${name}`, { type: "demo.tick", at });
    const id = jobIdFor(typeHome("demo.tick", 0).name, `schedule:${name}:1:${at}`);
    const { vi: v } = await import("vitest");
    const job = await v.waitFor(
      async () => {
        const r = await api("GET", `/v1/jobs/${id}`);
        if (r.status !== 200) throw new Error("not fired yet");
        return r.body.job;
      },
      { timeout: 10_000, interval: 50 },
    );
    const done = await waitForJob(job.id, isTerminal);
    expect(done).toMatchObject({ scheduledFor: at, result: { scheduledFor: at } });
  });
});
