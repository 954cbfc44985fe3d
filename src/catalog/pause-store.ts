/**
 * Paused types, the catalog's side (docs/http-api.md "Pausing a type"; docs/design.md
 * "Pause"). A scope object decides alone what it dispatches, so a pause must
 * reach every object that may hold the type's jobs. Each catalog shard keeps
 * the paused set and promises each home that reported or asked within
 * PAUSE_PROMISE_MS to tell it of a change (`pause_watch`); a home whose
 * promise has lapsed asks before it dispatches or hands out a job. A pause
 * answers once every promised home has been told, so after it nothing of
 * the type starts anywhere.
 *
 * Plain functions over SqlStorage, run inside the catalog's transactions.
 *
 * @module
 */

/**
 * How long a report or a sync binds the shard to tell the home of a change. Long, so that a home active every few
 * minutes renews it (a row here, its copy there) about twice an hour, not at nearly every report: a small team's
 * hour wrote 1,337 rows for it at 5 minutes (docs/design.md "A small team's day"). What it costs instead is at a
 * pause or resume, rare: one call to each home that reported within it.
 */
export const PAUSE_PROMISE_MS = 30 * 60_000;

/** What a home learns: the paused types as of `version`, and how long the shard will tell it of a change. */
export interface PauseSync {
  version: number;
  types: string[];
  /**
   * The shard that answered, as `<name>/<shard count>`. Versions count per shard: a home that hears from
   * another (the shard count changed) takes its answer whatever its version.
   */
  from: string;
  /**
   * The promise, as a duration from when the shard took the call: the home counts it from when it sent
   * the call, on its own clock, so no clock of one machine is read against another's. 0 in a change notice.
   */
  promiseMs: number;
}

const PAUSED = "SELECT type FROM type_pause WHERE paused = 1 ORDER BY type";
const VERSION = "SELECT coalesce(max(version), 0) AS v FROM type_pause";
/**
 * A promise is renewed in storage only once less than PAUSE_PROMISE_MS − WATCH_STEP_MS of it is left: a home reports
 * every second, and renewing each time wrote its row each time; the answer says what is stored (at least 15
 * minutes, well over the home's PROMISE_MARGIN_MS), and the home writes its own copy only as it grows.
 */
export const WATCH_STEP_MS = PAUSE_PROMISE_MS / 2;
const WATCH_HELD = "SELECT until FROM pause_watch WHERE home = ?";
const WATCH = `
INSERT INTO pause_watch (home, until) VALUES (?1, ?2)
ON CONFLICT (home) DO UPDATE SET until = max(until, excluded.until)`;
/**
 * Lapsed promises, dropped at a pause or resume (the only time the table is read by `until`): a scan, without an
 * index on `until` — a renewal writes its row alone, where the index made it two (catalog migration 0013), and
 * rows read cost a thousandth of rows written.
 */
const WATCH_DROP = "DELETE FROM pause_watch WHERE until < ?";
const WATCHED = "SELECT home FROM pause_watch WHERE until >= ? ORDER BY home";
const SET = `
INSERT INTO type_pause (type, paused, changed_at, version) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (type) DO UPDATE SET paused = excluded.paused, changed_at = excluded.changed_at, version = excluded.version`;
const ALL = "SELECT type, paused, changed_at FROM type_pause ORDER BY type";

export function pausedTypes(sql: SqlStorage): string[] {
  return sql.exec<{ type: string }>(PAUSED).toArray().map((r) => r.type);
}

function version(sql: SqlStorage): number {
  return sql.exec<{ v: number }>(VERSION).one().v;
}

/**
 * promise: `home` is told of changes until at least now + PAUSE_PROMISE_MS − WATCH_STEP_MS (renewed to now +
 * PAUSE_PROMISE_MS when less is left), and the answer: what holds now, and the promise as stored.
 */
export function promise(sql: SqlStorage, home: string, from: string, now: number): PauseSync {
  let until = sql.exec<{ until: number }>(WATCH_HELD, home).toArray()[0]?.until ?? 0;
  if (until < now + PAUSE_PROMISE_MS - WATCH_STEP_MS) sql.exec(WATCH, home, (until = now + PAUSE_PROMISE_MS));
  return { version: version(sql), types: pausedTypes(sql), promiseMs: until - now, from };
}

/**
 * setPaused: pause or resume `type` here, and the homes to tell. Versions are per shard: a home
 * hears only from the shard it reports to.
 */
export function setPaused(sql: SqlStorage, type: string, paused: boolean, from: string, now: number): { notice: PauseSync; homes: string[] } {
  sql.exec(WATCH_DROP, now);
  const v = version(sql) + 1;
  sql.exec(SET, type, paused ? 1 : 0, now, v);
  return { notice: { version: v, types: pausedTypes(sql), promiseMs: 0, from }, homes: sql.exec<{ home: string }>(WATCHED, now).toArray().map((r) => r.home) };
}

/** pauseChanges: every type ever paused here, with whether it is now and since when (GET /v1/types). */
export function pauseChanges(sql: SqlStorage): { type: string; paused: boolean; changedAt: number }[] {
  return sql.exec<{ type: string; paused: number; changed_at: number }>(ALL).toArray().map((r) => ({ type: r.type, paused: r.paused === 1, changedAt: r.changed_at }));
}
