/**
 * Where a job lives (DESIGN.md §2), and job ids that say so.
 *
 * - A scoped job lives in `scope:<scope.type>:<scope.id>`, whatever its type.
 * - An unscoped job lives in `type:<jobType>:<k>`, `k = fnv1a(dedupeKey ?? id) mod shards`.
 *
 * Name parts are `encodeURIComponent`-escaped so that `scope:a:b` / `c` and
 * `scope:a` / `b:c` can never share an object.
 *
 * A job id is `<base64url(home)>.<local id>`: every call that names a job is
 * routed without a lookup. The local id is the client's `id` when one is given
 * (so the same id in the same home is the same job), else a fresh one — made
 * by the home from the job's seq (seqLocalId) when one enqueue call to it
 * brings the job, by the coordinator otherwise (newLocalId).
 *
 * @module
 */
import { decodeText, encodeText } from "../base64url";
import { randomHex } from "../random-hex";
import type { Scope } from "./schemas";

export type Home = { kind: "scope"; name: string; scope: Scope } | { kind: "type"; name: string; type: string; shard: number };

export function scopeHome(scope: Scope): Home {
  return { kind: "scope", name: `scope:${enc(scope.type)}:${enc(scope.id)}`, scope };
}

export function typeHome(type: string, shard: number): Home {
  return { kind: "type", name: `type:${enc(type)}:${shard}`, type, shard };
}

/** homeFor places a new job: its scope object, or the shard of its type picked by its key. */
export function homeFor(job: { type: string; scope?: Scope | null; dedupeKey?: string; localId: string }, shards: number): Home {
  if (job.scope) return scopeHome(job.scope);
  return typeHome(job.type, shardOf(job.dedupeKey ?? job.localId, shards));
}

/**
 * groupByHome: the items by the home `homeOf` names, each group in the items' order, homes in first-seen order —
 * what goes to one object in one call (the coordinator's fan-out, the schedule object's fires).
 */
export function groupByHome<T>(items: Iterable<T>, homeOf: (item: T) => string): Map<string, T[]> {
  const byHome = new Map<string, T[]>();
  for (const item of items) {
    const home = homeOf(item);
    const group = byHome.get(home);
    if (group) group.push(item);
    else byHome.set(home, [item]);
  }
  return byHome;
}

/** parseHome reads a home name back; null for anything that is not one. */
export function parseHome(name: string): Home | null {
  const parts = name.split(":");
  if (parts.length !== 3) return null;
  const [kind, a, b] = parts as [string, string, string];
  let home: Home | null = null;
  try {
    if (kind === "scope" && a && b) home = scopeHome({ type: decodeURIComponent(a), id: decodeURIComponent(b) });
    if (kind === "type" && a && /^(0|[1-9]\d{0,5})$/.test(b)) home = typeHome(decodeURIComponent(a), Number(b));
  } catch {
    return null; // malformed escape
  }
  // Only the one spelling we produce: `%41` for `A` would otherwise name a second object for the same scope.
  return home && home.name === name ? home : null;
}

const enc = (s: string) => encodeURIComponent(s);

/** shardOf: FNV-1a (32 bit) of the key's UTF-8 bytes, mod shards. Stable across deploys. */
export function shardOf(key: string, shards: number): number {
  if (shards <= 1) return 0;
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(key)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shards;
}

/** The last home and its base64url: a batch's jobs mostly share one home, and encoding it was most of making an id. */
let lastHome: { name: string; encoded: string } | null = null;

export function jobIdFor(home: string, localId: string): string {
  if (lastHome?.name !== home) lastHome = { name: home, encoded: encodeText(home) };
  return `${lastHome.encoded}.${localId}`;
}

/** homeOfJobId returns the home a job id names, or null when the id is not one of ours. */
export function homeOfJobId(id: string): Home | null {
  const dot = id.indexOf(".");
  if (dot <= 0 || dot === id.length - 1) return null;
  const name = decodeText(id.slice(0, dot));
  return name === null ? null : parseHome(name);
}

/**
 * seqLocalId: the local id a home object gives a job enqueued without `id` — `<ms base36>~<seq base36>`, its creation
 * time and its seq there — so the object finds it by its seq, with no id index entry (docs/design.md "What a job
 * costs"). `~` is never in a caller's id (ClientJobId); the time keeps an id from naming a later job that got a
 * deleted job's seq.
 */
export function seqLocalId(now: number, seq: number): string {
  return `${now.toString(36).padStart(9, "0")}~${seq.toString(36)}`;
}

/** seqOfJobId: the seq a job id names when its home made it from one (seqLocalId, exactly that form), else null. */
export function seqOfJobId(id: string): number | null {
  const m = SEQ_LOCAL_ID.exec(id.slice(id.indexOf(".") + 1));
  return m ? parseInt(m[1]!, 36) : null;
}

const SEQ_LOCAL_ID = /^[0-9a-z]{9}~([0-9a-z]{1,10})$/;

/** newLocalId: time-ordered (base36 ms) plus 64 random bits, so ids sort roughly by creation. */
export function newLocalId(now: number): string {
  return `${now.toString(36).padStart(9, "0")}${randomHex(8)}`;
}


