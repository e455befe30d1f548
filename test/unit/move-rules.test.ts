import { describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { MAX_FOLDER_DEPTH, newFolderRecord, type FolderRecord, type ItemRecord, type MarkupRecord } from '../../shared/db/items.js';
import { BadRequestError, ConflictError, ServiceError, NotFoundError } from '../../shared/errors.js';
import {
  alreadyThere,
  batchErrorOf,
  carriedIn,
  commitVerdict,
  destinationVerdict,
  followUp,
  MAX_CARRIED_ITEMS,
  movePlan,
  placed,
  requireBatchEntry,
  requireDepthAfterMove,
  requireDistinct,
  requireMovableTo,
  requireNotIntoItself,
  requireOneWorkspace,
  requireSameWorkspaceOrOrgKey,
  sourceVerdict,
} from '../../shared/domain/items/move-rules.js';
import type { Ancestry } from '../../shared/domain/items/tree.js';

/** Issue 33 item 4: the move rules (spec "Move rules") as pure functions, without emulators. */

const ORG = 'org-1';

function folder(id: string, parent: FolderRecord | null, fields: Partial<FolderRecord> = {}): FolderRecord {
  const workspaceId = fields.workspaceId ?? parent?.workspaceId ?? 'ws-a';
  return {
    ...newFolderRecord({ id, workspaceId, organizationId: ORG, name: id, parent, role: parent ? 'folder' : 'root', at: 1_000 }),
    ...fields,
  };
}

function markup(id: string, parent: FolderRecord, fields: Partial<MarkupRecord> = {}): MarkupRecord {
  return {
    kind: 'markup',
    id,
    type: 'webpage',
    workspaceId: parent.workspaceId,
    organizationId: ORG,
    parentFolderId: parent.id,
    name: id,
    createdAt: 1_000,
    modifiedAt: 1_000,
    activityAt: 1_000,
    hasRetainedOriginal: false,
    ...fields,
  } as MarkupRecord;
}

/** A chain of folders below a root: the root first. */
function chain(workspaceId: string, ...names: string[]): FolderRecord[] {
  const folders = [folder(`${workspaceId}-root`, null, { workspaceId })];
  for (const name of names) folders.push(folder(name, folders.at(-1)!));
  return folders;
}

const ancestryOf = (folders: FolderRecord[]): Ancestry => ({ folder: folders.at(-1)!, ancestors: folders.slice(0, -1) });
const statusOf = (work: () => unknown): number | undefined => {
  try {
    work();
  } catch (error) {
    return (error as ServiceError).status;
  }
  return undefined;
};
/** A folder whose move into another workspace is recorded and still carried. */
const carried = (record: FolderRecord, from: string): FolderRecord => ({ ...record, pendingMoveFrom: from });

const orgKey = { kind: 'apiKey', scope: 'organization', organizationId: ORG } as unknown as Principal;
const workspaceKey = { kind: 'apiKey', scope: 'workspace', organizationId: ORG, workspaceId: 'ws-a' } as unknown as Principal;

describe('Move rule 1: only organization keys move into another workspace, and only of their organization', () => {
  const [rootA] = chain('ws-a');
  const [rootB] = chain('ws-b');

  it('lets a workspace key move within its workspace and refuses it another (403 workspace-out-of-scope)', () => {
    expect(() => requireSameWorkspaceOrOrgKey(workspaceKey, 'ws-a', rootA!)).not.toThrow();
    expect(() => requireSameWorkspaceOrOrgKey(workspaceKey, 'ws-a', rootB!)).toThrow(
      expect.objectContaining({
        status: 403,
        slug: 'workspace-out-of-scope',
        detail: 'Workspace-scoped keys move items only inside their own workspace.',
      }),
    );
  });

  it('lets an organization key move into another workspace of its organization', () => {
    expect(() => requireSameWorkspaceOrOrgKey(orgKey, 'ws-a', rootB!)).not.toThrow();
  });

  it('refuses a destination in another organization (403), whatever the key, and the root and archive folders (422)', () => {
    const [, inA] = chain('ws-a', 'a');
    const elsewhere = folder('x-root', null, { workspaceId: 'ws-x', organizationId: 'org-2' });
    const archive = folder('archive', null, { role: 'archive' });

    expect(() => requireMovableTo(inA!, elsewhere)).toThrow(
      expect.objectContaining({ status: 403, detail: 'Items move only between workspaces of the same organization.' }),
    );
    expect(statusOf(() => requireMovableTo(rootA!, rootB!))).toBe(422);
    expect(() => requireMovableTo(archive, rootB!)).toThrow('The workspace archive folder cannot be moved.');
    expect(statusOf(() => requireMovableTo(inA!, rootB!))).toBeUndefined();
  });
});

describe('Move rule 2: a batch lists each item once, from one workspace', () => {
  it('refuses an id listed twice (400) before anything is read', () => {
    expect(() => requireDistinct(['a', 'b', 'a'])).toThrow(new BadRequestError('Item a is listed more than once.'));
    expect(() => requireDistinct(['a', 'b'])).not.toThrow();
  });

  it('answers the one workspace of the sources found, none when none exist, and 400 move-spans-workspaces for several', () => {
    const [rootA, a] = chain('ws-a', 'a');
    const [, b] = chain('ws-b', 'b');

    expect(requireOneWorkspace([a!, markup('m', rootA!)])).toBe('ws-a');
    expect(requireOneWorkspace([])).toBeUndefined();
    expect(() => requireOneWorkspace([a!, b!])).toThrow(
      expect.objectContaining({
        status: 400,
        slug: 'move-spans-workspaces',
        detail: 'All items of one move must come from the same workspace; these come from 2: ws-a, ws-b.',
      }),
    );
  });
});

describe('the item as read again just before it moves', () => {
  const [root, a, b] = chain('ws-a', 'a', 'b');

  it('moves it when it is still where the request found it', () => {
    expect(sourceVerdict(b!, { ...b!, name: 'renamed' }, root!.id)).toEqual({ kind: 'move', current: { ...b!, name: 'renamed' } });
  });

  it('is a 404 once it is gone and a 409 once it moved (another parent or another workspace)', () => {
    expect(() => sourceVerdict(b!, undefined, root!.id)).toThrow(new NotFoundError(`Item ${b!.id} does not exist.`));
    expect(() => sourceVerdict(b!, { ...b!, parentFolderId: root!.id }, root!.id)).toThrow(ConflictError);
    expect(() => sourceVerdict(b!, { ...b!, workspaceId: 'ws-b' }, root!.id)).toThrow(
      `Item ${b!.id} was moved or deleted by another request; read it again and retry.`,
    );
  });

  it('answers a folder still carried into another workspace as the same move repeated when it goes where it went, else 409', () => {
    const [rootB] = chain('ws-b');
    const arrived = carried({ ...a!, workspaceId: 'ws-b', parentFolderId: rootB!.id }, 'ws-a');
    const requested = { ...a!, workspaceId: 'ws-b', parentFolderId: rootB!.id };

    expect(sourceVerdict(requested, arrived, rootB!.id)).toEqual({ kind: 'repeated', current: arrived });
    expect(() => sourceVerdict(requested, arrived, 'elsewhere')).toThrow(
      `Folder ${a!.id} is still being moved into another workspace; try again in a few seconds.`,
    );
  });

  it('does not take a move within one workspace left unfinished for a recorded one', () => {
    const unfinished = { ...a!, pendingMoveFrom: 'ws-a' };

    expect(sourceVerdict(unfinished, unfinished, root!.id).kind).toBe('move');
  });
});

describe('the destination, by its parent links', () => {
  const folders = chain('ws-b', 'p', 'q');

  it('is a 404 when it is no folder, ready when nothing around it moves', () => {
    expect(() => destinationVerdict('gone', undefined)).toThrow(new NotFoundError('Folder gone does not exist.'));
    expect(destinationVerdict('q', ancestryOf(folders))).toEqual({ kind: 'ready', to: ancestryOf(folders) });
  });

  it('waits for a folder of its chain still carried into another workspace (409 after requeueing it), before any unfinished move', () => {
    const [root, p, q] = folders;
    const within = { ...q!, pendingMoveFrom: 'ws-b' };
    const to = { folder: within, ancestors: [root!, carried(p!, 'ws-a')] };

    expect(destinationVerdict('q', to)).toEqual({ kind: 'carrying', folder: carried(p!, 'ws-a') });
    expect(carriedIn(to)).toEqual(carried(p!, 'ws-a'));
    expect(carriedIn(ancestryOf(folders))).toBeUndefined();
    expect(carriedIn(undefined)).toBeUndefined();
  });

  it('finishes the unfinished moves within one workspace of its chain first, then tries again', () => {
    const [root, p, q] = folders;
    const to = { folder: { ...q!, pendingMoveFrom: 'ws-b' }, ancestors: [root!, { ...p!, pendingMoveFrom: 'ws-b' }] };

    expect(destinationVerdict('q', to)).toEqual({ kind: 'unfinished', folders: [to.ancestors[1], to.folder] });
  });

  it('leaves an item already under it as it is', () => {
    const [, , q] = folders;

    expect(alreadyThere(markup('m', q!), ancestryOf(folders))).toBe(true);
    expect(alreadyThere(folder('r', null, { workspaceId: 'ws-b' }), ancestryOf(folders))).toBe(false);
  });
});

describe('Move rule 3: no root, not into itself, not beyond the depth limit', () => {
  const folders = chain('ws-a', 'a', 'b', 'c');
  const [root, a, b, c] = folders;

  it('refuses a folder into itself or any folder below it (422)', () => {
    for (const below of [[root!, a!], [root!, a!, b!], folders]) {
      expect(() => requireNotIntoItself(a!, ancestryOf(below))).toThrow(
        `Folder ${a!.id} cannot be moved into itself or into one of its own subfolders.`,
      );
    }
  });

  it('answers whether the item is a folder (its tree is then read) and refuses the root (422)', () => {
    const [otherRoot] = chain('ws-b');

    expect(requireNotIntoItself(b!, ancestryOf([otherRoot!]))).toBe(true);
    expect(requireNotIntoItself(markup('m', c!), ancestryOf(folders))).toBe(false);
    expect(statusOf(() => requireNotIntoItself(root!, ancestryOf([otherRoot!])))).toBe(422);
  });

  it(`keeps the deepest folder of the moved tree within ${MAX_FOLDER_DEPTH} levels (422 beyond)`, () => {
    const deep = chain('ws-b', ...Array.from({ length: MAX_FOLDER_DEPTH - 2 }, (_, i) => `d${i}`));
    // The moved tree a > b > c is three levels: under a folder at depth MAX - 3, c lands at MAX; one deeper, beyond.
    const fits = ancestryOf(deep.slice(0, -1));
    const tooDeep = ancestryOf(deep);

    expect(() => requireDepthAfterMove(a!, fits, [b!, c!])).not.toThrow();
    expect(() => requireDepthAfterMove(a!, tooDeep, [b!, c!])).toThrow(
      `This move would put a folder ${MAX_FOLDER_DEPTH + 1} levels below the workspace root; folders nest at most ${MAX_FOLDER_DEPTH} levels deep.`,
    );
    expect(() => requireDepthAfterMove(c!, tooDeep, [])).not.toThrow();
  });
});

describe('what a move carries along, and what follows its commit', () => {
  const [rootA, a] = chain('ws-a', 'a');
  const [rootB] = chain('ws-b');
  const subfolders = (n: number) => Array.from({ length: n }, (_, i) => folder(`s${i}`, a!));

  it('within a workspace: a folder carries its subfolders in the request, at most MAX_CARRIED_ITEMS (422 beyond); a markup nothing', () => {
    expect(movePlan(a!, rootA!, [])).toEqual({ crossWorkspace: false, carries: false, recordsMove: false });
    expect(movePlan(a!, rootA!, subfolders(2))).toEqual({ crossWorkspace: false, carries: true, recordsMove: false });
    expect(movePlan(markup('m', a!, { hasRetainedOriginal: true }), rootA!, [])).toEqual({
      crossWorkspace: false,
      carries: false,
      recordsMove: false,
    });
    expect(() => movePlan(a!, rootA!, subfolders(MAX_CARRIED_ITEMS + 1))).toThrow(
      `This move would carry ${MAX_CARRIED_ITEMS + 1} folders along; one move within a workspace carries at most ${MAX_CARRIED_ITEMS}. Move the subfolders separately first.`,
    );
    expect(followUp(movePlan(a!, rootA!, subfolders(2)))).toBe('finish-here');
    expect(followUp(movePlan(a!, rootA!, []))).toBe('none');
  });

  it('into another workspace: a folder is always recorded and carried by the worker, however large; a markup carries its retained original', () => {
    expect(movePlan(a!, rootB!, subfolders(MAX_CARRIED_ITEMS + 1))).toEqual({ crossWorkspace: true, carries: true, recordsMove: true });
    expect(movePlan(a!, rootB!, [])).toEqual({ crossWorkspace: true, carries: true, recordsMove: true });
    expect(followUp(movePlan(a!, rootB!, []))).toBe('queue-worker');
    expect(movePlan(markup('m', a!, { hasRetainedOriginal: true }), rootB!, [])).toEqual({
      crossWorkspace: true,
      carries: true,
      recordsMove: false,
    });
    expect(followUp(movePlan(markup('m', a!, { hasRetainedOriginal: true }), rootB!, []))).toBe('finish-here');
    expect(movePlan(markup('m', a!), rootB!, [])).toEqual({ crossWorkspace: true, carries: false, recordsMove: false });
  });

  it('places the item under the destination with its ancestry, a later modifiedAt, the archive path asked for, and where it came from when it carries', () => {
    const [, , deeper] = chain('ws-b', 'p', 'q');
    const archived = { ...a!, archivedFromPath: ['Old'] };

    const next = placed(archived, deeper!, { name: 'a (2)', carries: true }, 5_000);

    expect(next).toMatchObject({
      id: a!.id,
      parentFolderId: deeper!.id,
      workspaceId: 'ws-b',
      name: 'a (2)',
      modifiedAt: 5_000,
      activityAt: 5_000,
    });
    expect(next).toMatchObject({ ancestorIds: [...deeper!.ancestorIds, deeper!.id], archivedFromPath: ['Old'], pendingMoveFrom: 'ws-a' });
    expect(placed(archived, deeper!, { name: 'a', archivedFromPath: null, carries: false }, 5_000)).not.toHaveProperty('archivedFromPath');
    expect(placed(a!, deeper!, { name: 'a', archivedFromPath: ['Root', 'x'], carries: false }, 5_000)).not.toHaveProperty(
      'pendingMoveFrom',
    );
    expect(placed(a!, deeper!, { name: 'a', archivedFromPath: ['Root', 'x'], carries: false }, 5_000).archivedFromPath).toEqual([
      'Root',
      'x',
    ]);
    // A clock behind the record's last change still moves modifiedAt forward.
    expect(placed(a!, deeper!, { name: 'a', carries: false }, 10).modifiedAt).toBe(a!.modifiedAt + 1);
    const movedMarkup = placed(markup('m', a!), deeper!, { name: 'm', carries: false }, 5_000);
    expect(movedMarkup).not.toHaveProperty('ancestorIds');
    expect(movedMarkup).toMatchObject({ parentFolderId: deeper!.id, workspaceId: 'ws-b' });
  });

  it('after the transaction: done, again from fresh reads (the ancestry moved, or the name was claimed), or 409 when the item itself changed', () => {
    expect(commitVerdict('i', 'moved')).toBe('done');
    expect(commitVerdict('i', 'ancestry-changed')).toBe('again');
    expect(commitVerdict('i', 'name-taken')).toBe('name-taken');
    expect(() => commitVerdict('i', 'item-changed')).toThrow(
      new ConflictError('Item i was moved or deleted by another request; read it again and retry.'),
    );
  });
});

describe('Move rule 5: a batch reports each entry that fails and moves the others', () => {
  const [rootA, a] = chain('ws-a', 'a');
  const [rootB] = chain('ws-b');

  it('reads each entry again: 404 when unknown, 409 when it left for a third workspace; one carried into the destination by an earlier entry still moves', () => {
    expect(() => requireBatchEntry('gone', undefined, 'ws-a', rootB!)).toThrow(new NotFoundError('Item gone does not exist.'));
    expect(requireBatchEntry(a!.id, a!, 'ws-a', rootB!)).toBe(a);
    const carriedAlong = { ...a!, workspaceId: 'ws-b' } as ItemRecord;
    expect(requireBatchEntry(a!.id, carriedAlong, 'ws-a', rootB!)).toBe(carriedAlong);
    expect(() => requireBatchEntry(a!.id, { ...a!, workspaceId: 'ws-c' }, 'ws-a', rootB!)).toThrow(
      expect.objectContaining({ status: 409, detail: `Item ${a!.id} was moved to another workspace by another request.` }),
    );
    expect(rootA!.workspaceId).toBe('ws-a');
  });

  it('turns a problem the caller may see into an entry of errors; anything else (a 5xx, a crash) fails the batch', () => {
    expect(batchErrorOf('x', new NotFoundError('Item x does not exist.'))).toEqual({
      itemId: 'x',
      statusCode: 404,
      message: 'Item x does not exist.',
    });
    expect(batchErrorOf('x', new ServiceError(503, 'unavailable', 'Service Unavailable', 'later'))).toBeUndefined();
    expect(batchErrorOf('x', new Error('boom'))).toBeUndefined();
  });
});
