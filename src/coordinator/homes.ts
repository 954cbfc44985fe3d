/**
 * Working over many homes (scope objects and type shards): calls made in parallel up to a width, and the
 * catalog's pages of homes walked to the end — each written once for every operation that fans out
 * (docs/design.md "The catalog at scale"); items are grouped by the home they go to with job/home.ts's
 * groupByHome.
 *
 * @module
 */

/** inParallel runs `fn` over `items` with at most `width` calls in flight; after a failure it starts no more. */
export async function inParallel<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length && !failed) {
        try {
          await fn(items[next++]!);
        } catch (e) {
          failed = true;
          throw e;
        }
      }
    }),
  );
}

/**
 * catalogPages: the catalog's homes, page after page in name order — `page(after, first)` asks for the
 * homes after `after` (`first`: the call that starts at `from`, which a cursor may ask to include) —
 * until a page comes back short.
 */
export async function* catalogPages(page: (after: string, first: boolean) => Promise<string[]>, size: number, from = ""): AsyncGenerator<string[]> {
  for (let after = from, first = true; ; first = false) {
    const homes = await page(after, first);
    yield homes;
    if (homes.length < size) return;
    after = homes[homes.length - 1]!;
  }
}

/**
 * directThenCatalog: the homes a bulk action over a type visits — the type's own shards first, read directly (a job
 * that failed a moment ago there is found though the catalog has not heard of it yet, as a listing finds it:
 * docs/http-api.md "Listing jobs"), then the catalog's homes in name order, less those. `from` (a cursor's home,
 * visited again: it may be half done) is in the direct list or the catalog's.
 */
export async function* directThenCatalog(direct: readonly string[], page: (after: string, first: boolean) => Promise<string[]>, size: number, from = ""): AsyncGenerator<string[]> {
  const at = from === "" ? 0 : direct.indexOf(from);
  if (at >= 0) {
    yield direct.slice(at);
    from = "";
  }
  const own = new Set(direct);
  for await (const homes of catalogPages(page, size, from)) yield homes.filter((h) => !own.has(h));
}
