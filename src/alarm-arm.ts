/**
 * AlarmArm: the one alarm of a Durable Object, set or deleted, skipping the
 * storage write when the time has not changed.
 *
 * @module
 */

export class AlarmArm {
  /** undefined: not known yet (fresh instance) — read it once. */
  private armedAt: number | null | undefined = undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** consumed: the alarm that is running now is no longer set (call at the top of alarm()). */
  consumed(): void {
    this.armedAt = null;
  }

  async set(at: number | null): Promise<void> {
    if (this.armedAt === undefined) this.armedAt = await this.storage.getAlarm();
    if (at === this.armedAt) return;
    if (at === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(at);
    this.armedAt = at;
  }
}
