/**
 * A topic registry instance's recent events, in memory: an event wait
 * registered a moment after its event was published still takes it
 * (event-waits.ts).
 *
 * @module
 */

/** How long a registry keeps a topic's events for waits that register late. */
export const EVENT_KEEP_MS = 300_000;

/** An event as it reaches a waiting job (and what the wait answers). */
export interface ArrivedEvent {
  id: string;
  topic: string;
  payload: Record<string, unknown>;
  /** When the registry heard of it (epoch ms). */
  at: number;
}

/** RecentEvents: a registry instance's events of the last EVENT_KEEP_MS, in emit order (at most RECENT_MAX). */
export class RecentEvents {
  private readonly list: ArrivedEvent[] = [];
  private registeredAt = -Infinity;

  /** add: false when this event id is held already (emitted again). */
  add(e: ArrivedEvent): boolean {
    this.prune(e.at);
    if (this.list.some((x) => x.id === e.id)) return false;
    this.list.push(e);
    if (this.list.length > RECENT_MAX) this.list.shift();
    return true;
  }

  since(at: number): ArrivedEvent[] {
    return this.list.filter((e) => e.at >= at);
  }

  registered(now: number): void {
    this.registeredAt = now;
  }

  /** awaited: a wait was registered within the window (this instance's knowledge). */
  awaited(now: number): boolean {
    return this.registeredAt > now - EVENT_KEEP_MS;
  }

  private prune(now: number): void {
    while (this.list.length > 0 && this.list[0]!.at < now - EVENT_KEEP_MS) this.list.shift();
  }
}

/** Events a registry instance holds in memory at most. */
const RECENT_MAX = 10_000;
