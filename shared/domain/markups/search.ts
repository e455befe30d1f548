import { fromItem, workspaceMarkupsPartition, type MarkupRecord } from '../../db/items.js';
import { searchWorkspaceMarkups, type SearchPage } from '../../db/markup-search.js';
import { queryPage, type Page } from '../../db/core/paging.js';

/** GET /markups: a workspace's markups, newest first (GSI4), with `before`/`since` cursors. */
export async function listMarkups(
  workspaceId: string,
  options: { limit: number; before?: string; since?: string },
): Promise<Page<MarkupRecord>> {
  return queryPage(
    {
      list: 'markups:created:desc',
      index: 'GSI4',
      partitionValue: workspaceMarkupsPartition(workspaceId),
      ascending: false,
      limit: options.limit,
      before: options.before,
      since: options.since,
    },
    (item) => fromItem(item) as MarkupRecord,
  );
}

/**
 * GET /markups/search: markups of the workspace, in every folder, whose name or URL contains `text`
 * (case-insensitive), newest first, read from the workspace's markup index with a read budget per
 * request (`searchWorkspaceMarkups`).
 */
export function searchMarkups(workspaceId: string, options: { text: string; limit: number; before?: string }): Promise<SearchPage> {
  return searchWorkspaceMarkups(workspaceId, options);
}
