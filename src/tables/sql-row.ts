/**
 * SqlRow: a table's row as SQLite hands it back to a statement (`SELECT *`, `RETURNING *`) — keyed by column name,
 * not drizzle's field name; a boolean column as the 0 or 1 stored; a nullable column's null. Row types of the hand-written
 * statements are derived from it, or checked against it, so a column added or changed in a table shows up there.
 *
 * @module
 */
import type { Column, Table } from "drizzle-orm";

type ColumnsOf<T extends Table> = T["_"]["columns"];

/** The value SQLite returns for one column. */
type SqlValue<C extends Column> = (C["_"]["data"] extends boolean ? number : C["_"]["data"]) | (C["_"]["notNull"] extends true ? never : null);

export type SqlRow<T extends Table> = {
  [K in keyof ColumnsOf<T> as ColumnsOf<T>[K]["_"]["name"]]: SqlValue<ColumnsOf<T>[K]>;
};
