/**
 * Time, injected. Every operation takes `now` from a Clock so tests own time
 * (swap an object's clock with `runInDurableObject`) instead of sleeping.
 *
 * @module
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private t: number) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): this {
    this.t += ms;
    return this;
  }
  set(t: number): this {
    this.t = t;
    return this;
  }
}
