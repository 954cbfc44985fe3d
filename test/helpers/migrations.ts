/**
 * The scope migrations up to one of them: a migration test migrates an object that far, fills it, then migrates the
 * rest and checks what the migration kept.
 */
import migrations from "../../migrations/scope/migrations.js";

export { migrations };

/** migrationsBefore: every scope migration before the one tagged `tag`. */
export function migrationsBefore(tag: string): typeof migrations {
  const at = migrations.journal.entries.findIndex((e) => e.tag === tag);
  if (at < 0) throw new Error(`no scope migration tagged ${tag}`);
  return { ...migrations, journal: { ...migrations.journal, entries: migrations.journal.entries.slice(0, at) } };
}
