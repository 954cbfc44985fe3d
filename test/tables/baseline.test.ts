/**
 * A new scope object is made from migrations/scope/baseline.sql (src/tables/migrate.ts): the schema every
 * migration since the first makes, made at once. This holds the baseline to the migrations — a fresh object's
 * schema is, statement for statement, what running every migration makes — and says what a new object's setup
 * writes. When a migration is added, `npm run db:baseline` writes the baseline again from this test's output.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import baseline from "../../migrations/scope/baseline.sql?raw";
import migrations from "../../migrations/scope/migrations.js";
import { baselineStatements, baselineTag, schemaStatements } from "../../src/tables/migrate";
import { meterOf } from "../../src/metering/meter";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope } from "../helpers/scope";

const norm = (statements: readonly string[]) => statements.map((s) => s.replace(/\s+/g, " ").trim());

describe("a new scope object's schema", () => {
  it("is made from the baseline, which is what every migration makes", async () => {
    const { stub } = await freshScope();
    const got = await runInDurableObject(stub, async (o: ScopeDO, state) => {
      const sql = state.storage.sql;
      const setup = meterOf(o)!.total.setupRowsWritten;
      const made = schemaStatements(sql);
      const last = sql.exec<{ created_at: number }>(`SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`).one().created_at;
      // The same storage emptied, then every migration since the first, as an object made before the baseline was.
      const all = sql.exec<{ type: string; name: string }>("SELECT type, name FROM sqlite_master WHERE substr(name, 1, 4) <> '_cf_' AND substr(name, 1, 7) <> 'sqlite_'").toArray();
      for (const kind of ["trigger", "index", "table"]) for (const r of all.filter((x) => x.type === kind)) sql.exec(`DROP ${kind.toUpperCase()} IF EXISTS "${r.name}"`);
      await migrate(drizzle(state.storage), migrations);
      return { setup, made, last, migrated: schemaStatements(sql) };
    });
    const last = migrations.journal.entries.at(-1)!;
    const expected = [`-- baseline: ${last.tag}`, "-- Written by `npm run db:baseline` (test/tables/baseline.test.ts): the schema every migration makes.", ...got.migrated.map((s) => `${s};`)].join("\n--> statement-breakpoint\n");
    if (baselineTag(baseline) !== last.tag || JSON.stringify(norm(baselineStatements(baseline).map((s) => s.replace(/;$/, "")))) !== JSON.stringify(norm(got.migrated))) {
      console.log(`BASELINE_SQL_JSON ${JSON.stringify(`${expected}\n`)}`);
    }
    expect(baselineTag(baseline), "migrations/scope/baseline.sql is not of the last migration: run `npm run db:baseline`").toBe(last.tag);
    expect(norm(baselineStatements(baseline).map((s) => s.replace(/;$/, ""))), "migrations/scope/baseline.sql is stale: run `npm run db:baseline`").toEqual(norm(got.migrated));
    // The object made from it holds the same schema, and the migrations table says it is at the last migration.
    expect(norm(got.made)).toEqual(norm(got.migrated));
    expect(got.last).toBe(last.when);
    // What a new scope object's setup writes (docs/design.md "A new tenant"): 455 rows through every migration.
    expect(got.setup).toBeLessThan(200);
    console.log(`SCOPE_SETUP_ROWS ${got.setup}`);
  });
});
