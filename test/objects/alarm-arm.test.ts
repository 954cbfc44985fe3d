/**
 * AlarmArm (src/alarm-arm.ts) over a real Durable Object's storage: it sets or
 * deletes the one alarm, reads the stored alarm once per instance, and skips
 * the write when the time has not changed — so what it believes armed must
 * always be what storage holds. The object is a fresh PoolDO, spoken to only
 * through runInDurableObject (its own AlarmArm stays idle); times are in 2030,
 * so no alarm fires during the test.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AlarmArm } from "../../src/alarm-arm";
import type { PoolDO } from "../../src/pool/pool-do";
import { env, T0 } from "../helpers/scope";

/** Storage that counts the alarm calls an AlarmArm makes, passing them on to the object's real storage. */
function counted(storage: DurableObjectStorage) {
  const calls = { get: 0, set: [] as number[], delete: 0 };
  const view = {
    getAlarm: () => (calls.get++, storage.getAlarm()),
    setAlarm: (at: number) => (calls.set.push(at), storage.setAlarm(at)),
    deleteAlarm: () => (calls.delete++, storage.deleteAlarm()),
  } as unknown as DurableObjectStorage;
  return { view, calls };
}

function inFreshObject<T>(f: (storage: DurableObjectStorage) => Promise<T>): Promise<T> {
  return runInDurableObject(env.POOL.getByName(`alarm-arm:${crypto.randomUUID()}`), (_o: PoolDO, state) => f(state.storage));
}

describe("AlarmArm", () => {
  it("sets the alarm, moves it, and deletes it", async () => {
    await inFreshObject(async (storage) => {
      const arm = new AlarmArm(storage);
      await arm.set(T0 + 1_000);
      expect(await storage.getAlarm()).toBe(T0 + 1_000);
      await arm.set(T0 + 500);
      expect(await storage.getAlarm()).toBe(T0 + 500);
      await arm.set(null);
      expect(await storage.getAlarm()).toBeNull();
    });
  });

  it("reads the stored alarm once, and writes nothing when the time has not changed", async () => {
    await inFreshObject(async (storage) => {
      const { view, calls } = counted(storage);
      const arm = new AlarmArm(view);
      await arm.set(T0 + 1_000);
      await arm.set(T0 + 1_000);
      await arm.set(T0 + 2_000);
      await arm.set(T0 + 2_000);
      await arm.set(null);
      await arm.set(null);
      expect(calls).toEqual({ get: 1, set: [T0 + 1_000, T0 + 2_000], delete: 1 });
    });
  });

  it("a fresh instance takes the alarm storage already holds: the same time is not written again", async () => {
    await inFreshObject(async (storage) => {
      await storage.setAlarm(T0 + 3_000); // left by the instance before
      const { view, calls } = counted(storage);
      const arm = new AlarmArm(view);
      await arm.set(T0 + 3_000);
      expect(calls).toEqual({ get: 1, set: [], delete: 0 });
      await arm.set(null);
      expect(await storage.getAlarm()).toBeNull();
    });
  });

  it("with nothing stored, deleting is nothing to do", async () => {
    await inFreshObject(async (storage) => {
      const { view, calls } = counted(storage);
      await new AlarmArm(view).set(null);
      expect(calls).toEqual({ get: 1, set: [], delete: 0 });
    });
  });

  it("consumed: the alarm that runs is gone from storage, so the same time is armed again", async () => {
    await inFreshObject(async (storage) => {
      const arm = new AlarmArm(storage);
      await arm.set(T0 + 1_000);
      await storage.deleteAlarm(); // what the runtime does with an alarm it runs
      arm.consumed(); // the top of alarm()
      await arm.set(T0 + 1_000);
      expect(await storage.getAlarm()).toBe(T0 + 1_000);
    });
  });

  it("without consumed() it would still believe that alarm set: why alarm() must call it first", async () => {
    await inFreshObject(async (storage) => {
      const arm = new AlarmArm(storage);
      await arm.set(T0 + 1_000);
      await storage.deleteAlarm();
      await arm.set(T0 + 1_000);
      expect(await storage.getAlarm()).toBeNull();
    });
  });

  it("a write that fails is not taken as armed: the next call for that time writes it", async () => {
    await inFreshObject(async (storage) => {
      let fail = true;
      const flaky = {
        getAlarm: () => storage.getAlarm(),
        setAlarm: (at: number) => (fail ? Promise.reject(new Error("storage refused")) : storage.setAlarm(at)),
        deleteAlarm: () => storage.deleteAlarm(),
      } as unknown as DurableObjectStorage;
      const arm = new AlarmArm(flaky);
      await expect(arm.set(T0 + 1_000)).rejects.toThrow("storage refused");
      fail = false;
      await arm.set(T0 + 1_000);
      expect(await storage.getAlarm()).toBe(T0 + 1_000);
    });
  });

  it("calls that overlap leave the last one's time armed", async () => {
    await inFreshObject(async (storage) => {
      const arm = new AlarmArm(storage);
      await arm.set(T0 + 1_000);
      // A re-arm still writing when another, computed later, asks for the time already armed.
      await Promise.all([arm.set(T0 + 9_000), arm.set(T0 + 1_000)]);
      expect(await storage.getAlarm()).toBe(T0 + 1_000);
      await Promise.all([arm.set(null), arm.set(T0 + 1_000)]);
      expect(await storage.getAlarm()).toBe(T0 + 1_000);
      await Promise.all([arm.set(T0 + 5_000), arm.set(null)]);
      expect(await storage.getAlarm()).toBeNull();
      // What it believes armed is what storage holds: null, so a time is written.
      await arm.set(T0 + 7_000);
      expect(await storage.getAlarm()).toBe(T0 + 7_000);
    });
  });

  it("calls that overlap on a fresh instance, while it reads the stored alarm, leave the last one's time armed", async () => {
    await inFreshObject(async (storage) => {
      await storage.setAlarm(T0 + 1_000);
      const arm = new AlarmArm(storage);
      await Promise.all([arm.set(T0 + 9_000), arm.set(T0 + 1_000)]);
      expect(await storage.getAlarm()).toBe(T0 + 1_000);
    });
  });
});
