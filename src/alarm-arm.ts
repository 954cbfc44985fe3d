/**
 * AlarmArm: the one alarm of a Durable Object, set or deleted, skipping the
 * storage write when the time has not changed.
 *
 * @module
 */

/** Inside alarm(), never re-arm for "now": a pass that filled its batch comes back this soon. */
export const ALARM_AGAIN_MS = 20;
/** After a failed alarm pass, try again this much later. */
export const ALARM_RETRY_MS = 5_000;

export class AlarmArm {
  /** undefined: not known yet (fresh instance) — read it once. */
  private armedAt: number | null | undefined = undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** consumed: the alarm that is running now is no longer set (call at the top of alarm()). */
  consumed(): void {
    this.armedAt = null;
  }

  /**
   * set: arm `at` (null: none). Calls may overlap (re-arms from the dispatcher's calls and from requests are
   * not awaited in turn): the time is taken as armed before the write is awaited, so a later call compares
   * with it and not with the time before — the last call's time is the one left in storage.
   */
  async set(at: number | null): Promise<void> {
    if (this.armedAt === undefined) {
      const stored = await this.storage.getAlarm();
      // A call that overlapped this read has armed a newer time than the one read.
      if (this.armedAt === undefined) this.armedAt = stored;
    }
    if (at === this.armedAt) return;
    this.armedAt = at;
    try {
      if (at === null) await this.storage.deleteAlarm();
      else await this.storage.setAlarm(at);
    } catch (e) {
      this.armedAt = undefined; // not known now: the next call reads it again
      throw e;
    }
  }

  /**
   * setAfterPass: arm from inside alarm() — a failed pass comes back within ALARM_RETRY_MS, one that filled its
   * batch within ALARM_AGAIN_MS, and never for "now" (the pass that runs is the one that would be woken).
   */
  async setAfterPass(at: number | null, now: number, pass: { failed: boolean; more: boolean }): Promise<void> {
    if (pass.failed) at = Math.min(at ?? Infinity, now + ALARM_RETRY_MS);
    if (pass.more) at = Math.min(at ?? Infinity, now + ALARM_AGAIN_MS);
    if (at !== null && at <= now) at = now + (pass.failed ? ALARM_RETRY_MS : ALARM_AGAIN_MS);
    await this.set(at);
  }
}
