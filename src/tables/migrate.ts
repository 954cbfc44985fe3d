/**
 * Applying drizzle-kit's migrations to an object's SQLite on start, inside
 * `blockConcurrencyWhile` so no request sees a half-made schema. drizzle 0.45
 * hides the real SQL error behind a rollback error (drizzle#5763), so the
 * failure is logged with what was being applied before it propagates (and the
 * runtime resets the object).
 *
 * A new object — its storage empty — is made from the baseline instead when
 * one is given and it is of the last migration (`-- baseline: <tag>`, written
 * by `npm run db:baseline` from a database every migration made): its tables,
 * indexes and triggers made once, as they stand, where running every migration
 * since the first made and rebuilt them again and again — rows written a new
 * tenant's object pays (docs/design.md "A new tenant"). The migrations table
 * then holds the last migration, so the next ones apply as to any object.
 * test/tables/baseline.test.ts holds the two the same.
 *
 * @module
 */
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";

export interface Migrations {
  journal: { entries: { idx: number; when: number; tag: string; breakpoints: boolean }[] };
  migrations: Record<string, string>;
}

/** drizzle's own table of applied migrations, as its migrator makes it. */
const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`;
/** Any table of ours: the runtime's own (`_cf_…`) and SQLite's (`sqlite_…`) are not. */
const ANY_TABLE = "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 4) <> '_cf_' AND substr(name, 1, 7) <> 'sqlite_'";

/** baselineTag: the migration a baseline stands for (its first line, `-- baseline: <tag>`), or null. */
export function baselineTag(baseline: string): string | null {
  return /^-- baseline: (\S+)/.exec(baseline)?.[1] ?? null;
}

/** baselineStatements: a baseline's statements, in order. */
export function baselineStatements(baseline: string): string[] {
  return baseline
    .split("--> statement-breakpoint")
    .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
    .filter((s) => s.length > 0);
}

export async function migrateStorage(storage: DurableObjectStorage, migrations: Migrations, what: string, baseline: string | null = null): Promise<void> {
  try {
    const last = migrations.journal.entries.at(-1);
    if (baseline !== null && last && baselineTag(baseline) === last.tag && storage.sql.exec<{ n: number }>(ANY_TABLE).one().n === 0) {
      storage.transactionSync(() => {
        for (const statement of baselineStatements(baseline)) storage.sql.exec(statement);
        storage.sql.exec(MIGRATIONS_TABLE);
        storage.sql.exec(`INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES ('', ?)`, last.when);
      });
    }
    await migrate(drizzle(storage), migrations);
  } catch (e) {
    const tags = migrations.journal.entries.map((m) => m.tag).join(", ");
    console.error(JSON.stringify({ event: "migrate:failed", what, tags, error: String(e), cause: String((e as Error).cause ?? "") }));
    throw e;
  }
}

/**
 * schemaStatements: the schema an object's storage holds, as statements that make it again — its tables first,
 * then indexes, then triggers, each in the order it was made (what `npm run db:baseline` writes).
 */
export function schemaStatements(sql: SqlStorage): string[] {
  return sql
    .exec<{ type: string; sql: string }>(
      `SELECT type, sql FROM sqlite_master WHERE sql IS NOT NULL AND substr(name, 1, 4) <> '_cf_' AND substr(name, 1, 7) <> 'sqlite_' AND name <> '__drizzle_migrations'
        ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, rowid`,
    )
    .toArray()
    .map((r) => r.sql);
}
