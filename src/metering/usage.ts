/**
 * What a Durable Object is billed for, as counted by its meter (meter.ts):
 * SQLite rows written and read (each statement's cursor; an index entry a
 * write touches is a row written), requests (each RPC method, fetch and alarm
 * invocation) and active wall time (some request in progress). Prices:
 * docs/design.md "What a job costs".
 *
 * @module
 */

/** The object kinds of the queue, as `/v1/metrics` labels them (`object="scope"`…). */
export const OBJECT_KINDS = ["scope", "catalog", "pool", "schedule", "wait"] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

export interface Usage {
  rowsWritten: number;
  rowsRead: number;
  requests: number;
  activeMs: number;
  /** Of rowsWritten and rowsRead, those of schema migrations: a new object's setup (billed like any write). */
  setupRowsWritten: number;
  setupRowsRead: number;
}

/**
 * What a sender reports (docs/operating.md "What the meters count"): everything its instance used since it began,
 * and which instance. A report sent twice, or after one that was lost, counts once: the catalog adds only what
 * grew since the instance's last report it took (catalog/usage-store.ts).
 */
export interface UsageReport {
  /** The object, `<kind>:<name>` (metering/meter.ts). */
  name: string;
  kind: ObjectKind;
  /** Random, one per instance: a new instance starts counting from zero. */
  instance: string;
  total: Usage;
}

export const USAGE_FIELDS = ["rowsWritten", "rowsRead", "requests", "activeMs", "setupRowsWritten", "setupRowsRead"] as const satisfies readonly (keyof Usage)[];

export function zeroUsage(): Usage {
  return { rowsWritten: 0, rowsRead: 0, requests: 0, activeMs: 0, setupRowsWritten: 0, setupRowsRead: 0 };
}

/** addUsage: `into` grows by `u` (or shrinks, with `sign` -1); returns `into`. */
export function addUsage<T extends Usage>(into: T, u: Usage, sign: 1 | -1 = 1): T {
  for (const f of USAGE_FIELDS) into[f] += sign * u[f];
  return into;
}

export function isZeroUsage(u: Usage): boolean {
  return USAGE_FIELDS.every((f) => u[f] === 0);
}

/** An object kind's usage, as the catalog rolls it up. */
export type KindUsage = Usage & { object: ObjectKind };
/** One minute of a kind's usage (`minute`: epoch ms of its start). */
export type MinuteUsage = KindUsage & { minute: number };

export function isObjectKind(s: string): s is ObjectKind {
  return (OBJECT_KINDS as readonly string[]).includes(s);
}
