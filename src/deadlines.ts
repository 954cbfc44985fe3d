/**
 * withTimeout: a call's answer, or a rejection once `ms` pass without one — for calls that must not hang (a pool
 * that does not answer, an outbox receiver). One timer serves every call in flight: it is armed for the soonest
 * deadline and re-armed as they pass, and cleared when no call is left. A timer set and cleared per call was a tenth
 * of a keyed drain's time (pool permits for every two jobs; docs/design.md "Guards").
 *
 * @module
 */
/** The rejection of a call that passed its deadline (a failure of its own is its own error). */
export class DeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "DeadlineError";
  }
}

interface Deadline {
  at: number;
  ms: number;
  reject: (e: Error) => void;
  settled: boolean;
}

let waiting: Deadline[] = [];
let live = 0;
let timer: ReturnType<typeof setTimeout> | null = null;
let armedFor = Infinity;

export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const d: Deadline = { at: Date.now() + ms, ms, reject, settled: false };
    waiting.push(d);
    live++;
    if (d.at < armedFor) arm(d.at);
    const settle = () => {
      if (d.settled) return false;
      d.settled = true;
      if (--live === 0) disarm();
      return true;
    };
    p.then(
      (v) => settle() && resolve(v),
      (e: unknown) => settle() && reject(e),
    );
  });
}

function arm(at: number): void {
  if (timer !== null) clearTimeout(timer);
  armedFor = at;
  timer = setTimeout(expire, Math.max(0, at - Date.now()));
}

function disarm(): void {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  armedFor = Infinity;
  waiting = [];
}

function expire(): void {
  timer = null;
  armedFor = Infinity;
  const now = Date.now();
  const left: Deadline[] = [];
  let next = Infinity;
  for (const d of waiting) {
    if (d.settled) continue;
    if (d.at <= now) {
      d.settled = true;
      live--;
      d.reject(new DeadlineError(d.ms));
      continue;
    }
    left.push(d);
    next = Math.min(next, d.at);
  }
  waiting = left;
  if (next < Infinity) arm(next);
}
