/**
 * Meter: counts what one Durable Object is billed for (usage.ts), exactly, as
 * it happens — no sampling, no estimate:
 *
 * - rows written and read: every `ctx.storage.sql.exec` cursor is kept until
 *   the end of the synchronous turn that opened it (a microtask), then its
 *   own `rowsWritten` and `rowsRead` are added. SQL here is synchronous and
 *   no caller holds a cursor across an await, so a cursor is spent by then;
 *   a write's rows are counted when `exec` runs it in any case. Each
 *   `ctx.storage.kv` get, put or delete is one row (the key-value API keeps
 *   one row per key in the object's SQLite).
 * - requests: each call of a method of the class (RPC, fetch, alarm) — see
 *   `meterRequests`; the class must not call its own methods through `this`.
 * - active time: wall time while at least one request is in progress
 *   (Date.now: it advances with I/O in workerd, which is when wall time does).
 *
 * The meter holds two tallies: `total` since the instance began (tests read
 * it) and `unsent`, what has not reached the catalog yet (taken with `take`,
 * given back with `giveBack` when a send fails). Counting writes nothing: an
 * evicted instance's unsent usage is lost (docs/design.md "What a job costs").
 *
 * @module
 */
import { addUsage, isZeroUsage, OBJECT_KINDS, zeroUsage, type ObjectKind, type Usage } from "./usage";

type Cursor = { readonly rowsWritten: number; readonly rowsRead: number };

const meters = new WeakMap<object, Meter>();
/** Every meter's usage by kind, and by object, in this isolate: the cost tests sum a whole workload's objects from it. */
const isolateTotals = new Map<ObjectKind, Usage>();
const objectTotals = new Map<string, Usage>();

export class Meter {
  readonly total: Usage = zeroUsage();
  private unsent: Usage = zeroUsage();
  private open: Cursor[] = [];
  private inflight = 0;
  private busySince = 0;
  private quiet = false;
  /** Called when the last request in progress ends (usage-sender.ts). */
  onIdle: (() => void) | null = null;

  constructor(
    readonly kind: ObjectKind,
    /** The object's name, when it has one (for the per-object tally tests read). */
    readonly name = "",
  ) {}

  /** install: meter `ctx`'s storage, for the object `owner` (whose class `meterRequests` wrapped). */
  static install(owner: object, ctx: DurableObjectState, kind: ObjectKind): Meter {
    const meter = new Meter(kind, `${kind}:${ctx.id.name ?? ctx.id.toString()}`);
    meters.set(owner, meter);
    meter.watchSql(ctx.storage.sql);
    meter.watchKv(ctx.storage.kv);
    return meter;
  }

  /** quietly: run `fn` (synchronous) without counting its statements — a test's own look inside an object. */
  quietly<T>(fn: () => T): T {
    this.settle();
    this.quiet = true;
    try {
      return fn();
    } finally {
      this.quiet = false;
    }
  }

  /** take: the usage not yet sent to the catalog, now counted as sent. */
  take(): Usage {
    this.settle();
    const u = this.unsent;
    this.unsent = zeroUsage();
    return u;
  }

  /** peek: the usage not yet sent, left unsent. */
  peek(): Usage {
    this.settle();
    return { ...this.unsent };
  }

  /** giveBack: a send of `u` failed; it goes with the next one. */
  giveBack(u: Usage): void {
    addUsage(this.unsent, u);
  }

  /** pending: whether anything is unsent (cursors of this turn included). */
  pending(): boolean {
    this.settle();
    return !isZeroUsage(this.unsent);
  }

  /** request: one invocation of the object, from its start to when `run` settles. */
  request<T>(run: () => T): T {
    this.add({ rowsWritten: 0, rowsRead: 0, requests: 1, activeMs: 0 });
    if (this.inflight++ === 0) this.busySince = Date.now();
    const done = () => {
      if (--this.inflight > 0) return;
      this.add({ rowsWritten: 0, rowsRead: 0, requests: 0, activeMs: Date.now() - this.busySince });
      // Counting must never fail the request it counted.
      try {
        this.onIdle?.();
      } catch (e) {
        console.error(JSON.stringify({ event: "meter:send_failed", object: this.kind, error: String(e) }));
      }
    };
    let out: T;
    try {
      out = run();
    } catch (e) {
      done();
      throw e;
    }
    if (out instanceof Promise) return out.finally(done) as T;
    done();
    return out;
  }

  private add(u: Usage): void {
    addUsage(this.total, u);
    addUsage(this.unsent, u);
    addUsage(isolateTotals.get(this.kind) ?? isolateTotals.set(this.kind, zeroUsage()).get(this.kind)!, u);
    if (this.name) addUsage(objectTotals.get(this.name) ?? objectTotals.set(this.name, zeroUsage()).get(this.name)!, u);
  }

  /** settle: count the cursors opened so far. */
  private settle(): void {
    if (this.open.length === 0) return;
    const u = zeroUsage();
    for (const c of this.open) {
      u.rowsWritten += c.rowsWritten;
      u.rowsRead += c.rowsRead;
    }
    this.open = [];
    this.add(u);
  }

  private watchSql(sql: SqlStorage): void {
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      if (this.quiet) return cursor;
      if (this.open.push(cursor) === 1) queueMicrotask(() => this.settle());
      return cursor;
    }) as SqlStorage["exec"];
  }

  private watchKv(kv: SyncKvStorage): void {
    const row = (read: boolean) => this.add({ rowsWritten: read ? 0 : 1, rowsRead: read ? 1 : 0, requests: 0, activeMs: 0 });
    const get = kv.get.bind(kv);
    const put = kv.put.bind(kv);
    const del = kv.delete.bind(kv);
    kv.get = ((key: string) => (row(true), get(key))) as SyncKvStorage["get"];
    kv.put = ((key: string, value: unknown) => (row(false), put(key, value))) as SyncKvStorage["put"];
    kv.delete = ((key: string) => (row(false), del(key))) as SyncKvStorage["delete"];
  }
}

/** meterOf: the meter `install` gave this object. */
export function meterOf(owner: object): Meter | undefined {
  return meters.get(owner);
}

/**
 * meterRequests: every method of `cls`'s own prototype (its RPC methods, fetch, alarm) counts one request on its
 * instance's meter. Wrapped on the prototype: workerd serves RPC from the prototype, never from instance fields.
 */
export function meterRequests(cls: { prototype: object }): void {
  const proto = cls.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (name === "constructor" || !d || typeof d.value !== "function") continue;
    const method = d.value as (...a: unknown[]) => unknown;
    Object.defineProperty(proto, name, {
      ...d,
      value: function (this: object, ...a: unknown[]) {
        const meter = meters.get(this);
        return meter ? meter.request(() => method.apply(this, a)) : method.apply(this, a);
      },
    });
  }
}

/** objectUsage: what each metered object of this isolate used so far, by `<kind>:<name>` (tests take differences). */
export function objectUsage(): Map<string, Usage> {
  return new Map([...objectTotals].map(([k, u]) => [k, { ...u }]));
}

/** isolateUsage: what every metered object of this isolate used so far, by kind (tests take differences). */
export function isolateUsage(): Record<ObjectKind, Usage> {
  const out = {} as Record<ObjectKind, Usage>;
  for (const kind of OBJECT_KINDS) out[kind] = { ...(isolateTotals.get(kind) ?? zeroUsage()) };
  return out;
}
