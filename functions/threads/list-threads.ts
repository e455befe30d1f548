import { listThreads } from '../../shared/domain/comments/read-threads.js';
import { DEFAULT_THREAD_ORDER } from '../../shared/domain/comments/thread-selection.js';
import { ok, operation } from '../../shared/http/route.js';
import { DEFAULT_THREAD_PAGE, ListThreadsQuery, MAX_THREAD_PAGE, ThreadPageSchema } from './schemas.js';

export const listThreadsOperation = operation({
  operationId: 'listThreads',
  summary: 'List threads',
  description:
    "A markup's threads with their messages and the caller's read state. " +
    'Filters: `resolved` (true or false), `viewMode` (desktop, tablet, mobile or a view mode id), `q` (text in any message, ' +
    'case-insensitive). `order`: page, pin_asc (default), pin_desc, activity, timestamp (media time), priority_asc, priority_desc. ' +
    `\`limit\` default ${DEFAULT_THREAD_PAGE}, at most ${MAX_THREAD_PAGE}. Next page: \`cursorId\` of the previous answer, or \`offset\`; ` +
    '`total` counts every thread the filter selects. `withThreadOrMessageId` opens the page holding that thread or message.',
  auth: 'apiKey',
  permission: 'thread:read',
  query: ListThreadsQuery,
  responses: [{ status: 200, description: 'A page of threads', schema: ThreadPageSchema }],
  handle: async ({ principal, query }) =>
    ok(await listThreads(principal, { ...query, order: query.order ?? DEFAULT_THREAD_ORDER, limit: query.limit ?? DEFAULT_THREAD_PAGE })),
});
