/**
 * Types nothing will run: due jobs of a type with no binding (not pushed), no
 * declaration in the config, and no pull claim asking for it in the last hour —
 * most often a typo in an enqueue, or a worker that was never started. Stats
 * and the dashboard flag them (docs/configuration.md "Configuration", `strictTypes`).
 *
 * Claims are remembered per type in `claimed_type`, at most once a minute per
 * type per catalog instance, so a busy pull worker adds about one write a
 * minute, not one per claim.
 *
 * @module
 */

/** A type no claim has asked for in this long is no longer taken as being pulled. */
const CLAIM_SEEN_WINDOW_MS = 3600_000;
/** A type's claim time is rewritten at most this often (it is only compared with an hour). */
const RECORD_EVERY_MS = 60_000;
/** The key a claim without types is kept under: it takes any pulled type. */
const ANY_TYPE = "*";

const CLAIMED_UPSERT = "INSERT INTO claimed_type (type, asked_at) VALUES (?1, ?2) ON CONFLICT (type) DO UPDATE SET asked_at = excluded.asked_at";
/** Types with due jobs in some home (home_type_next_idx), minus those a recent claim asked for. */
const DUE_UNCLAIMED = `
SELECT DISTINCT t.type AS type FROM home_type t
 WHERE t.next_run_at <= ?1 AND (?2 IS NULL OR t.type = ?2)
   AND NOT EXISTS (SELECT 1 FROM claimed_type c WHERE c.type IN (t.type, '${ANY_TYPE}') AND c.asked_at >= ?3)
 ORDER BY t.type`;

export class ClaimedTypes {
  private readonly written = new Map<string, number>();

  /** record: a claim asked for these types (null: any). Call inside the claim's transaction. */
  record(sql: SqlStorage, types: readonly string[] | null, now: number): void {
    for (const type of types ?? [ANY_TYPE]) {
      const last = this.written.get(type);
      if (last !== undefined && now - last < RECORD_EVERY_MS) continue;
      sql.exec(CLAIMED_UPSERT, type, now);
      this.written.set(type, now);
    }
  }
}

/** unhandledTypes: types (all, or the one asked) with due jobs that are not declared and that no claim asked for lately. */
export function unhandledTypes(sql: SqlStorage, declared: Readonly<Record<string, unknown>>, type: string | null, now: number): string[] {
  return sql
    .exec<{ type: string }>(DUE_UNCLAIMED, now, type, now - CLAIM_SEEN_WINDOW_MS)
    .toArray()
    .map((r) => r.type)
    .filter((t) => !Object.hasOwn(declared, t));
}
