/**
 * rowsWrittenBy: run `fn` (synchronous) and add up the rows its statements on `sql` wrote, from each cursor — what
 * Cloudflare bills (docs/design.md "How SQLite counts").
 */
export function rowsWrittenBy<T>(sql: SqlStorage, fn: () => T): { out: T; written: number } {
  const target = sql as unknown as { exec: SqlStorage["exec"] };
  const real = target.exec;
  let written = 0;
  target.exec = ((...a: Parameters<SqlStorage["exec"]>) => {
    const cursor = real.apply(sql, a);
    written += cursor.rowsWritten;
    return cursor;
  }) as SqlStorage["exec"];
  try {
    const out = fn();
    return { out, written };
  } finally {
    target.exec = real;
  }
}
