import type { Principal } from '../../auth/principal.js';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { eventItem, type NewEvent } from '../../db/events.js';
import { itemVersion, type MarkupRecord } from '../../db/items.js';
import { applyItemChange, claimItemVersion, moveMarkupRecords } from '../../db/item-writes.js';
import { versionCondition } from '../../db/core/table.js';
import { failIfArmed } from '../../db/core/faults.js';
import { bestEffort, FRESH_READ_RETRY, nextTime } from '../../db/core/transact.js';
import { touchWorkspaceActivity } from '../../db/workspaces.js';
import { BadRequestError, ConflictError, FeatureNotEnabledError } from '../../errors.js';
import { requireVersion, staleVersion, type IfMatch } from '../common/versions.js';
import { deleteItemRecords } from '../items/deletion.js';
import { folderBeingDeleted, sourceBeingDeleted } from '../items/move-rules.js';
import { finishPendingMove } from '../items/pending-moves.js';
import { loadMarkup, loadMarkups, requireDistinct, roleAccessFor, type MarkupAccess } from './access.js';
import { recordActivity } from './activity.js';
import { loadTargetFolder } from './placement.js';

/** A change retries from a fresh read of the markup (or of markups and a folder) while others win, up to 10 s, before it answers 409. */
const WRITE_RETRY = FRESH_READ_RETRY;

/**
 * Reads a markup (authorized for the route's permission), applies `change` and writes the
 * difference, retrying from a fresh read when a concurrent writer changed the same fields.
 * `change` may throw (plan rules). `event` names the event a real change emits: its outbox item
 * commits with the change (DESIGN.md: which operation emits which event). With `ifMatch` the write
 * also holds the version read, so a change landing meanwhile is read again and answers 412.
 */
async function changeMarkup(
  principal: Principal,
  markupId: string,
  change: (access: MarkupAccess) => MarkupRecord,
  event?: NewEvent['type'],
  ifMatch?: IfMatch,
): Promise<MarkupAccess> {
  return withBackoff(
    async () => {
      const access = await loadMarkup(principal, markupId, { consistent: true });
      const version = itemVersion(access.markup);
      requireVersion(ifMatch, version, `Markup ${markupId}`);
      const next = change(access);
      const also = () =>
        event ? [eventItem({ type: event, workspaceId: access.markup.workspaceId, markupId, userId: principal.userId })] : [];
      const when = ifMatch ? versionCondition(version) : undefined;
      if (!(await applyItemChange(access.markup, next, { unchangedSinceRead: true, when }, also))) return AGAIN;
      return next === access.markup ? access : { ...access, markup: { ...next, version: version + 1 } };
    },
    { ...WRITE_RETRY, exhausted: () => new ConflictError(`Markup ${markupId} is being changed by another request; try again.`) },
  );
}

/** Renames a markup; a rename counts as activity of the workspace (it orders the `lastActivity` list). */
export async function renameMarkup(principal: Principal, markupId: string, name: string, ifMatch?: IfMatch): Promise<MarkupAccess> {
  const renamed = await changeMarkup(
    principal,
    markupId,
    ({ markup }) => {
      if (markup.name === name) return markup;
      const at = nextTime(markup.modifiedAt);
      return { ...markup, name, modifiedAt: at, activityAt: at };
    },
    undefined,
    ifMatch,
  );
  await bestEffort('workspace activity', () => touchWorkspaceActivity(renamed.workspace.id));
  return renamed;
}

/**
 * States and transitions: pausing comments (`readOnly: true`) needs the plan's
 * `pauseCommentsEnabled` (403 feature-not-enabled otherwise); resuming is always allowed. Setting
 * the state the markup already has changes nothing and succeeds.
 */
export async function setMarkupReadOnly(
  principal: Principal,
  markupId: string,
  readOnly: boolean,
  ifMatch?: IfMatch,
): Promise<MarkupAccess> {
  // Only a real change is an event (DESIGN.md: set_project_read_only, read-only changed).
  return changeMarkup(
    principal,
    markupId,
    ({ markup, plan }) => {
      if (readOnly && !plan.pauseCommentsEnabled) {
        throw new FeatureNotEnabledError('pauseComments', "The organization's plan does not include pausing comments (read-only markups).");
      }
      if (markup.readOnly === readOnly) return markup;
      return { ...markup, readOnly, modifiedAt: nextTime(markup.modifiedAt) };
    },
    'set_project_read_only',
    ifMatch,
  );
}

/**
 * Deletes markups, all or nothing as far as checks go: every id must be a markup the caller may
 * delete (the route's permission, `markup:delete`, in its workspace) before anything is removed. The records go through
 * `deleteItemRecords`, then what hangs off each markup under `MARKUP#<id>`.
 */
export async function deleteMarkups(principal: Principal, markupIds: readonly string[], ifMatch?: IfMatch): Promise<void> {
  requireDistinct(markupIds, 'markupIds');
  const markups = await loadMarkups(principal, markupIds);
  const workspaceIds = [...new Set(markups.map((markup) => markup.workspaceId))];
  await Promise.all(
    workspaceIds.map(async (workspaceId) => {
      await roleAccessFor(
        principal,
        markups.find((markup) => markup.workspaceId === workspaceId)!,
      );
    }),
  );
  // DELETE /markups/:id with If-Match: one conditional write at the version read fences the deletion's many writes.
  for (const markup of ifMatch ? markups : []) {
    requireVersion(ifMatch, itemVersion(markup), `Markup ${markup.id}`);
    if (!(await claimItemVersion(markup.id, itemVersion(markup)))) throw staleVersion(`Markup ${markup.id}`);
  }
  await deleteItemRecords(markups);
  const at = new Date().toISOString();
  await Promise.all(workspaceIds.map((workspaceId) => bestEffort('workspace activity', () => touchWorkspaceActivity(workspaceId, at))));
}

/**
 * Moves markups into `targetFolderId`, all or nothing, in one transaction (Move rules 1 and 2):
 * every source must be a markup of one workspace (400 otherwise); a workspace key moves only
 * within its workspace; an organization key may move into another workspace of its organization.
 * The caller needs the route's permission (`item:update`) in the source and the destination workspace. Across
 * workspaces, a markup with a retained original is marked `pendingMoveFrom` in that transaction and
 * its original follows after (`finishPendingMove`); a repeated request finishes what a failed one left.
 */
export async function moveMarkups(principal: Principal, markupIds: readonly string[], targetFolderId: string): Promise<void> {
  requireDistinct(markupIds, 'markupIds');
  const moved = await withBackoff(
    async () => {
      const markups = await loadMarkups(principal, markupIds);
      const sourceWorkspaceId = markups[0]!.workspaceId;
      if (markups.some((markup) => markup.workspaceId !== sourceWorkspaceId)) {
        throw new BadRequestError('All markups of one move must belong to the same workspace.', 'sources-span-workspaces');
      }
      await roleAccessFor(principal, markups[0]!);
      // Move rule 1 comes with the folder's scope check: a workspace key reaches no other workspace's folder (403).
      const { item: target } = await loadTargetFolder(principal, targetFolderId, 'targetFolderId', { allowArchive: true });
      if (target.deletingSince !== undefined) throw folderBeingDeleted(target.id);
      const unfinished = markups.filter((markup) => markup.pendingMoveFrom);
      if (unfinished.length > 0) {
        for (const markup of unfinished) await finishPendingMove(markup);
        return AGAIN;
      }

      const at = Date.now();
      const moves = markups.flatMap((markup) => {
        if (markup.parentFolderId === target.id) return [];
        const time = Math.max(at, markup.modifiedAt + 1);
        const next: MarkupRecord = {
          ...markup,
          parentFolderId: target.id,
          workspaceId: target.workspaceId,
          modifiedAt: time,
          activityAt: time,
        };
        if (markup.hasRetainedOriginal && markup.workspaceId !== target.workspaceId) next.pendingMoveFrom = markup.workspaceId;
        return [{ current: markup, next }];
      });
      if (moves.length === 0) return undefined;
      // The destination must still be the same live folder when the markups land in it.
      const outcome = await moveMarkupRecords(moves, target);
      if (outcome === 'source-deleting') throw sourceBeingDeleted('these markups');
      if (outcome === 'changed') return AGAIN;
      return { moves, sourceWorkspaceId, target, at };
    },
    { ...WRITE_RETRY, exhausted: () => new ConflictError('The markups or the folder are being changed by another request; try again.') },
  );
  if (!moved) return;
  const { moves, sourceWorkspaceId, target, at } = moved;
  // A retained original belongs to its markup's workspace, so it follows the markup.
  for (const { next } of moves.filter((move) => move.next.pendingMoveFrom)) {
    await failIfArmed('before-original-move', next.id);
    await finishPendingMove(next);
  }
  await recordActivity(target.workspaceId, [target], at);
  if (target.workspaceId !== sourceWorkspaceId) await bestEffort('workspace activity', () => touchWorkspaceActivity(sourceWorkspaceId));
}
