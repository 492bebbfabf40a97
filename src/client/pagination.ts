// Walks a paginated list page by page, as an async iterator of its items.
import type { Pagination } from '../api/index.js';

/** One page of a list: its items, and where it is in the list. */
export interface Page<T> {
  /** The page's items. */
  items: T[];
  /** The list's `total`, this `page` of `total_pages`, `per_page` each. */
  pagination: Pagination;
}

/**
 * Every item of a list from `page` on, fetching a page only when the previous one is used up.
 * An item seen already is not yielded again: a list sorted by date shifts while it is walked
 * when candidates arrive, and would otherwise repeat the last items of a page on the next.
 */
export async function* walkPages<T>(
  fetchPage: (page: number) => Promise<Page<T>>,
  identity: (item: T) => string,
  firstPage = 1,
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  for (let page = firstPage; ; page++) {
    const { items, pagination } = await fetchPage(page);
    for (const item of items) {
      const id = identity(item);
      if (seen.has(id)) continue;
      seen.add(id);
      yield item;
    }
    if (items.length === 0 || page >= pagination.total_pages) return;
  }
}
