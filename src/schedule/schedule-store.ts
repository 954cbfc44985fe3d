/**
 * The schedule rows: create or replace, read, delete, and the due ones. Plain
 * functions over SqlStorage (synchronous: each call is one transaction).
 *
 * @module
 */
import type { Lens } from "../sealing/lens";
import { SealError } from "../sealing/vault";
import { scopeOfRow } from "../scope/api";
import { localTime } from "../cron";
import { firstSlotAfter, triggerOf } from "./slots";
import { MAX_CATCHUP_DEFAULT, type Schedule, type ScheduleSpec } from "../job/schedule-spec";
import type { schedule } from "../tables/schedule";
import type { SqlRow } from "../tables/sql-row";

/** A schedule row as a statement returns it (`SELECT *`): the table's (src/tables/schedule.ts). */
type Row = SqlRow<typeof schedule>;
export type ScheduleRow = Row;

const GET = "SELECT * FROM schedule WHERE name = ?";
const LIST = "SELECT * FROM schedule ORDER BY name";
const DELETE = "DELETE FROM schedule WHERE name = ? RETURNING name";
const UPSERT = `
INSERT INTO schedule (name, type, payload, scope_type, scope_id, cron, every_ms, at, anchor, misfire, max_catchup, paused, source,
                      generation, next_run_at, last_fired_at, created_at, updated_at, tz)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 1, ?14, NULL, ?15, ?15, ?16)
ON CONFLICT (name) DO UPDATE SET type = ?2, payload = ?3, scope_type = ?4, scope_id = ?5, cron = ?6, every_ms = ?7, at = ?8, anchor = ?9,
  misfire = ?10, max_catchup = ?11, paused = ?12, source = ?13, generation = generation + 1, next_run_at = ?14, last_fired_at = NULL, updated_at = ?15,
  tz = ?16`;
const SET_PAUSED = "UPDATE schedule SET paused = ?, source = ?, next_run_at = ?, updated_at = ? WHERE name = ?";
/** scheduleDue: schedule_next_idx. */
const DUE = "SELECT * FROM schedule WHERE next_run_at IS NOT NULL AND next_run_at <= ? AND paused = 0 ORDER BY next_run_at LIMIT ?";
/** Only for the generation the pass planned with: a schedule replaced meanwhile keeps its own plan. */
const RECORD = "UPDATE schedule SET next_run_at = ?, last_fired_at = coalesce(?, last_fired_at), updated_at = ? WHERE name = ? AND generation = ?";
const NEXT_WAKE = "SELECT min(next_run_at) AS t FROM schedule WHERE paused = 0";
const CONFIG_NAMES = "SELECT name FROM schedule WHERE source = 'config'";

export function toSchedule(r: Row, lens: Lens): Schedule {
  return {
    name: r.name,
    type: r.type,
    payload: lens.openSync(lens.show(r.payload, r.type), "reader") as Schedule["payload"],
    scope: scopeOfRow(r),
    cron: r.cron,
    tz: r.tz ?? "UTC",
    everyMs: r.every_ms,
    at: r.at,
    misfire: r.misfire,
    maxCatchup: r.max_catchup,
    paused: r.paused === 1,
    source: r.source,
    nextRunAt: r.next_run_at,
    nextRunAtLocal: r.next_run_at === null ? null : localTime(r.next_run_at, r.tz ?? "UTC"),
    lastFiredAt: r.last_fired_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function getSchedule(sql: SqlStorage, name: string): Row | null {
  return sql.exec<Row>(GET, name).toArray()[0] ?? null;
}

export function listSchedules(sql: SqlStorage): Row[] {
  return sql.exec<Row>(LIST).toArray();
}

export function deleteSchedule(sql: SqlStorage, name: string): boolean {
  return sql.exec(DELETE, name).toArray().length > 0;
}

/**
 * putSchedule creates or replaces. A schedule given again unchanged (a config
 * re-synced on start) keeps where it stands; a changed one starts afresh from
 * now: an `everyMs` grid from now, a cron from its next slot, an `at` at its time.
 */
/** setPaused: pause or resume, nothing else changed. Resuming starts from the next slot: a pause is not downtime, its slots are not missed ones. */
export function setPaused(sql: SqlStorage, existing: Row, paused: boolean, source: "api" | "config", now: number): Row {
  const resumed = existing.paused === 1 && !paused;
  const trigger = triggerOf({ cron: existing.cron, tz: existing.tz, everyMs: existing.every_ms, at: existing.at, anchor: existing.anchor });
  const next = resumed && existing.next_run_at !== null ? firstSlotAfter(trigger, now) : existing.next_run_at;
  sql.exec(SET_PAUSED, paused ? 1 : 0, source, next, now, existing.name);
  return getSchedule(sql, existing.name)!;
}

export function putSchedule(sql: SqlStorage, lens: Lens, name: string, spec: ScheduleSpec, source: "api" | "config", now: number): { row: Row; created: boolean } {
  const existing = getSchedule(sql, name);
  const payload = JSON.stringify(spec.payload ?? {});
  const same =
    existing !== null &&
    existing.type === spec.type &&
    // Compared opened: each sealing of the same payload differs (a random iv; sealing/vault.ts). One sealed with a key
    // no longer listed is not the same: it is sealed again with the current key.
    openedOrNull(lens, existing.payload) === payload &&
    existing.scope_type === (spec.scope?.type ?? null) &&
    existing.scope_id === (spec.scope?.id ?? null) &&
    existing.cron === (spec.cron ?? null) &&
    (existing.tz ?? "UTC") === (spec.tz ?? "UTC") &&
    existing.every_ms === (spec.everyMs ?? null) &&
    existing.at === (spec.at ?? null) &&
    existing.misfire === (spec.misfire ?? "latest") &&
    existing.max_catchup === (spec.maxCatchup ?? null);
  if (existing && same) return { row: setPaused(sql, existing, spec.paused ?? false, source, now), created: false };
  const anchor = spec.everyMs !== undefined ? now + spec.everyMs : now;
  const trigger = triggerOf({ cron: spec.cron ?? null, tz: spec.tz ?? null, everyMs: spec.everyMs ?? null, at: spec.at ?? null, anchor });
  const next = trigger.kind === "at" ? trigger.at : firstSlotAfter(trigger, now);
  sql.exec(
    UPSERT,
    name,
    spec.type,
    lens.seal(payload),
    spec.scope?.type ?? null,
    spec.scope?.id ?? null,
    spec.cron ?? null,
    spec.everyMs ?? null,
    spec.at ?? null,
    anchor,
    spec.misfire ?? "latest",
    spec.maxCatchup ?? null,
    spec.paused ? 1 : 0,
    source,
    next,
    now,
    spec.tz ?? null,
  );
  return { row: getSchedule(sql, name)!, created: existing === null };
}

/** syncConfigSchedules: the config's schedules exist as declared; config ones it no longer declares are gone. */
export function syncConfigSchedules(sql: SqlStorage, lens: Lens, declared: Record<string, ScheduleSpec>, now: number): void {
  for (const [name, spec] of Object.entries(declared)) putSchedule(sql, lens, name, spec, "config", now);
  for (const { name } of sql.exec<{ name: string }>(CONFIG_NAMES).toArray()) {
    if (!(name in declared)) deleteSchedule(sql, name);
  }
}

export function dueSchedules(sql: SqlStorage, now: number, limit: number): Row[] {
  return sql.exec<Row>(DUE, now, limit).toArray();
}

export function recordPass(sql: SqlStorage, name: string, generation: number, nextRunAt: number | null, lastFiredAt: number | null, now: number): void {
  sql.exec(RECORD, nextRunAt, lastFiredAt, now, name, generation);
}

export function nextScheduleWake(sql: SqlStorage): number | null {
  return sql.exec<{ t: number | null }>(NEXT_WAKE).one().t;
}

export function maxCatchupOf(r: Row): number {
  return r.max_catchup ?? MAX_CATCHUP_DEFAULT;
}

/** openedOrNull: a stored payload's JSON text opened, or null when it does not open (its key is no longer listed). */
function openedOrNull(lens: Lens, text: string): string | null {
  try {
    return lens.openText(text);
  } catch (e) {
    if (e instanceof SealError) return null;
    throw e;
  }
}
