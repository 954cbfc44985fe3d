/**
 * Flights: the jobs whose attempts this object's handler calls are running,
 * one per job. A flight holds the job's lease token until its outcome is
 * settled, its timeout fires, it is cancelled or its lease is lost — then it
 * is dropped, and whatever its call reports for the job later is ignored
 * (the settle is fenced by the token, and the dispatcher only settles what a
 * live flight of that same call holds).
 *
 * @module
 */

export interface Flight<C> {
  id: string;
  token: string;
  call: C;
  timer: ReturnType<typeof setTimeout> | null;
}

export class Flights<C> {
  private readonly byId = new Map<string, Flight<C>>();

  /**
   * take: the call now runs the job under `token`. `timeoutAt` (epoch ms by `now`'s clock) fires
   * `onTimeout` just after the job's timeoutMs ends, if the flight is still the job's.
   * Returns the flight this one replaced, if any (it has lost its lease).
   */
  take(id: string, token: string, call: C, timeoutAt: number | null, now: number, onTimeout: (f: Flight<C>) => void): Flight<C> | undefined {
    const stale = this.byId.get(id);
    if (stale) this.drop(stale);
    const flight: Flight<C> = { id, token, call, timer: null };
    if (timeoutAt !== null) {
      flight.timer = setTimeout(() => {
        if (this.byId.get(id) === flight) onTimeout(flight);
      }, timeoutAt - now + 1);
    }
    this.byId.set(id, flight);
    return stale;
  }

  get(id: string): Flight<C> | undefined {
    return this.byId.get(id);
  }

  /** heldBy: the job's live flight, if it belongs to this call under this token. */
  heldBy(id: string, call: C, token: string): Flight<C> | undefined {
    const f = this.byId.get(id);
    return f && f.call === call && f.token === token ? f : undefined;
  }

  drop(flight: Flight<C>): void {
    if (flight.timer) clearTimeout(flight.timer);
    if (this.byId.get(flight.id) === flight) this.byId.delete(flight.id);
  }

  all(): Flight<C>[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }
}
