import * as v from 'valibot';
import { listThreads } from '../../shared/domain/threads.js';
import { DEFAULT_THREAD_ORDER } from '../../shared/domain/thread-list.js';
import { ok, operation } from '../../shared/http/route.js';
import { Cursor, Id, QueryBoolean, queryInteger } from '../../shared/http/schemas.js';
import { DEFAULT_THREAD_PAGE, MAX_THREAD_PAGE, ThreadOrderSchema, ThreadSchema, ViewModeFilter } from './schemas.js';

const Query = v.object({
  markupId: Id,
  cursorId: v.optional(Cursor),
  limit: v.optional(queryInteger(1, MAX_THREAD_PAGE)),
  offset: v.optional(queryInteger(0, 1_000_000)),
  withThreadOrMessageId: v.optional(Id),
  resolved: v.optional(QueryBoolean),
  order: v.optional(ThreadOrderSchema),
  viewMode: v.optional(ViewModeFilter),
  q: v.optional(v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters'))),
});

export const listThreadsOperation = operation({
  operationId: 'listThreads',
  summary: "A markup's threads with their messages and the caller's read state",
  description:
    `Filters: \`resolved\` (true or false), \`viewMode\` (desktop, tablet, mobile or a view mode id), \`q\` (text in any message, ` +
    `case-insensitive). \`order\`: page, pin_asc (default), pin_desc, activity, timestamp (media time), priority_asc, priority_desc. ` +
    `\`limit\` default ${DEFAULT_THREAD_PAGE}, at most ${MAX_THREAD_PAGE}. Next page: \`cursorId\` of the previous answer, or \`offset\`; ` +
    '`total` counts every thread the filter selects. `withThreadOrMessageId` opens the page holding that thread or message.',
  auth: 'apiKey',
  query: Query,
  responses: [
    {
      status: 200,
      description: 'A page of threads',
      schema: v.object({
        threads: v.array(ThreadSchema),
        query: v.object({ resolved: v.nullable(v.boolean()) }),
        offset: v.number(),
        total: v.number(),
        cursorId: v.nullable(v.string()),
      }),
    },
  ],
  handle: async ({ principal, query }) =>
    ok(await listThreads(principal, { ...query, order: query.order ?? DEFAULT_THREAD_ORDER, limit: query.limit ?? DEFAULT_THREAD_PAGE })),
});
