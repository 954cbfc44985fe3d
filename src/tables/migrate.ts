/**
 * Applying drizzle-kit's migrations to an object's SQLite on start, inside
 * `blockConcurrencyWhile` so no request sees a half-made schema. drizzle 0.45
 * hides the real SQL error behind a rollback error (drizzle#5763), so the
 * failure is logged with what was being applied before it propagates (and the
 * runtime resets the object).
 *
 * @module
 */
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";

export interface Migrations {
  journal: { entries: { idx: number; when: number; tag: string; breakpoints: boolean }[] };
  migrations: Record<string, string>;
}

export async function migrateStorage(storage: DurableObjectStorage, migrations: Migrations, what: string): Promise<void> {
  try {
    await migrate(drizzle(storage), migrations);
  } catch (e) {
    const tags = migrations.journal.entries.map((m) => m.tag).join(", ");
    console.error(JSON.stringify({ event: "migrate:failed", what, tags, error: String(e), cause: String((e as Error).cause ?? "") }));
    throw e;
  }
}
