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
 *   one row per key in the object's SQLite). The statements of a schema
 *   migration (`setup`) count as any other and also apart: a new object's
 *   setup cost.
 * - requests: each call of a method of the class (RPC, fetch, alarm) — see
 *   `meterRequests`; the class must not call its own methods through `this`.
 * - active time: wall time while at least one request in progress
 *   (Date.now: it advances with I/O in workerd, which is when wall time does).
 *
 * The meter keeps one tally, `total`, since the instance began, and reports
 * it whole, with the instance's random id (`report`): the catalog adds what
 * grew since the last report of that instance it took, in the transaction
 * that takes it (catalog/usage-store.ts), so a report sent twice or after a
 * lost one counts once, and nothing is held anywhere but here. What an
 * instance counted after its last report that landed is lost with it
 * (docs/operating.md "What the meters count").
 *
 * @module
 */
import { addUsage, OBJECT_KINDS, zeroUsage, type ObjectKind, type Usage, type UsageReport } from "./usage";

type Cursor = { readonly rowsWritten: number; readonly rowsRead: number };

const meters = new WeakMap<object, Meter>();
/** Every meter's usage by kind, and by object, in this isolate: the cost tests sum a whole workload's objects from it. */
const isolateTotals = new Map<ObjectKind, Usage>();
const objectTotals = new Map<string, Usage>();

export class Meter {
  readonly total: Usage = zeroUsage();
  /** This instance, in its reports: the catalog counts a new instance from zero. */
  readonly instance = crypto.randomUUID();
  /** The cursors of this turn, each with whether a migration opened it. */
  private open: { cursor: Cursor; setup: boolean; statement: string | undefined }[] = [];
  private inflight = 0;
  private busySince = 0;
  private quiet = false;
  private inSetup = false;
  /** Called when the last request in progress ends (usage-sender.ts). */
  onIdle: (() => void) | null = null;

  constructor(
    readonly kind: ObjectKind,
    /** The object's name, when it has one (for the per-object tally tests read, and the catalog's per-sender row). */
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

  /**
   * setup: run a schema migration (`fn`, under blockConcurrencyWhile, so nothing else runs meanwhile); its
   * statements count as setup too.
   */
  async setup<T>(fn: () => Promise<T>): Promise<T> {
    this.inSetup = true;
    try {
      return await fn();
    } finally {
      this.settle();
      this.inSetup = false;
    }
  }

  /** report: everything this instance used so far, to send whole (see the module's note). */
  report(): UsageReport {
    this.settle();
    return { name: this.name, kind: this.kind, instance: this.instance, total: { ...this.total } };
  }

  /** request: one invocation of the object, from its start to when `run` settles. */
  request<T>(run: () => T): T {
    this.add({ ...zeroUsage(), requests: 1 });
    if (this.inflight++ === 0) this.busySince = Date.now();
    const done = () => {
      if (--this.inflight > 0) return;
      this.add({ ...zeroUsage(), activeMs: Date.now() - this.busySince });
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
    addUsage(isolateTotals.get(this.kind) ?? isolateTotals.set(this.kind, zeroUsage()).get(this.kind)!, u);
    if (this.name) addUsage(objectTotals.get(this.name) ?? objectTotals.set(this.name, zeroUsage()).get(this.name)!, u);
  }

  /** settle: count the cursors opened so far. */
  private settle(): void {
    if (this.open.length === 0) return;
    const u = zeroUsage();
    for (const { cursor: c, setup, statement } of this.open) {
      if (statement !== undefined && c.rowsWritten > 0) traceRows(this.kind, statement, c.rowsWritten);
      u.rowsWritten += c.rowsWritten;
      u.rowsRead += c.rowsRead;
      if (setup) {
        u.setupRowsWritten += c.rowsWritten;
        u.setupRowsRead += c.rowsRead;
      }
    }
    this.open = [];
    this.add(u);
  }

  private watchSql(sql: SqlStorage): void {
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      if (this.quiet) return cursor;
      if (this.open.push({ cursor, setup: this.inSetup, statement: statementTrace.on ? query : undefined }) === 1) queueMicrotask(() => this.settle());
      return cursor;
    }) as SqlStorage["exec"];
  }

  private watchKv(kv: SyncKvStorage): void {
    const row = (read: boolean) => this.add({ ...zeroUsage(), rowsWritten: read ? 0 : 1, rowsRead: read ? 1 : 0 });
    const get = kv.get.bind(kv);
    const put = kv.put.bind(kv);
    const del = kv.delete.bind(kv);
    kv.get = ((key: string) => (row(true), get(key))) as SyncKvStorage["get"];
    const traced = (op: string, key: string) => statementTrace.on && traceRows(this.kind, `kv.${op} ${key}`, 1);
    kv.put = ((key: string, value: unknown) => (row(false), traced("put", key), put(key, value))) as SyncKvStorage["put"];
    kv.delete = ((key: string) => (row(false), traced("delete", key), del(key))) as SyncKvStorage["delete"];
  }
}

/**
 * Rows written per statement, by object kind and statement text: off unless a measurement turns it on
 * (`node bench/cost.mjs --trace`, test/cost/harness.ts). It is how a workload's rows are found where they go
 * (docs/design.md "What a job costs"); a deployed queue never turns it on, and off it costs a property read.
 */
export const statementTrace: { on: boolean; rows: Map<string, number> } = { on: false, rows: new Map() };

function traceRows(kind: ObjectKind, statement: string, rows: number): void {
  const key = `${kind} | ${statement.replace(/\s+/g, " ").trim().slice(0, 120)}`;
  statementTrace.rows.set(key, (statementTrace.rows.get(key) ?? 0) + rows);
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
