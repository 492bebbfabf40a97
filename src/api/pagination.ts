import { z } from 'zod';
import { LIMITS } from './limits.js';

/** `page` (from 1) and `per_page` (1 to 100, default 50), as query-string text or numbers. */
export const pageQuery = {
  page: z.coerce
    .number({ error: 'must be a whole number from 1' })
    .int('must be a whole number from 1')
    .min(1, 'must be a whole number from 1')
    .default(1),
  per_page: z.coerce
    .number({ error: `must be a whole number from ${LIMITS.minPerPage} to ${LIMITS.maxPerPage}` })
    .int(`must be a whole number from ${LIMITS.minPerPage} to ${LIMITS.maxPerPage}`)
    .min(LIMITS.minPerPage, `must be a whole number from ${LIMITS.minPerPage} to ${LIMITS.maxPerPage}`)
    .max(LIMITS.maxPerPage, `must be a whole number from ${LIMITS.minPerPage} to ${LIMITS.maxPerPage}`)
    .default(LIMITS.defaultPerPage),
};

/** Where a page is in its list, as list answers carry it. */
export const paginationSchema = z.object({
  total: z.int().min(0),
  page: z.int().min(1),
  per_page: z.int().min(1),
  total_pages: z.int().min(0),
});
/** Where a page is in its list: `total` items, `page` of `total_pages`, `per_page` each. */
export type Pagination = z.infer<typeof paginationSchema>;

/** The page of `items` asked for, and its `pagination` object. */
export function paginate<T>(items: readonly T[], page: number, perPage: number): { items: T[]; pagination: Pagination } {
  return {
    items: items.slice((page - 1) * perPage, page * perPage),
    pagination: { total: items.length, page, per_page: perPage, total_pages: Math.ceil(items.length / perPage) },
  };
}
