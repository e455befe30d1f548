import { describe, expect, it } from 'vitest';
import { newFolderRecord, type FolderRecord } from '../../shared/db/items.js';
import { chooseFolderName, freeName } from '../../shared/domain/items/names.js';
import { rebaseAncestorIds, subtreeHeight } from '../../shared/domain/items/tree.js';
import { folderItemScopes, toFolderItem } from '../../shared/domain/items/views.js';

const taken = (...names: string[]) => new Set(names.map((name) => name.toLowerCase()));

function folder(id: string, parent: FolderRecord | null, name = id): FolderRecord {
  return newFolderRecord({ id, workspaceId: 'ws', organizationId: 'org', name, parent, role: parent ? 'folder' : 'root', at: 1 });
}

describe('Move rule 4: a clashing folder name takes a numeric suffix in parentheses', () => {
  it('keeps a free name as it is', () => {
    expect(freeName('Designs', taken('Other'))).toBe('Designs');
  });

  it('adds the first free number from 2, comparing case-insensitively', () => {
    expect(freeName('Designs', taken('designs'))).toBe('Designs (2)');
    expect(freeName('Designs', taken('Designs', 'Designs (2)', 'designs (3)'))).toBe('Designs (4)');
  });

  it('numbers from the base of a name that already ends in a number', () => {
    expect(freeName('Designs (2)', taken('Designs', 'Designs (2)'))).toBe('Designs (3)');
  });

  it('leaves parentheses that are not a trailing number alone', () => {
    expect(freeName('Draft (final)', taken('draft (final)'))).toBe('Draft (final) (2)');
    expect(freeName(' (2)', taken(' (2)'))).toBe(' (2) (2)');
  });

  it('cuts a long base so the suffixed name stays within 200 characters', () => {
    const long = 'x'.repeat(200);

    const result = freeName(long, taken(long));

    expect(result).toHaveLength(200);
    expect(result.endsWith(' (2)')).toBe(true);
  });

  it('uses fallbackName on a clash, numbers it when it clashes too, and ignores it without a clash', () => {
    expect(chooseFolderName('Designs', 'Old designs', taken('Designs'))).toBe('Old designs');
    expect(chooseFolderName('Designs', 'Old designs', taken('Designs', 'old designs'))).toBe('Old designs (2)');
    expect(chooseFolderName('Designs', 'Old designs', taken())).toBe('Designs');
    expect(chooseFolderName('Designs', undefined, taken('Designs'))).toBe('Designs (2)');
  });
});

describe('Move rule 3: depth and ancestry of a moved folder tree', () => {
  const root = folder('root', null);
  const a = folder('a', root);
  const b = folder('b', a);
  const c = folder('c', b);
  const d = folder('d', c);

  it('measures the height of the tree below a folder', () => {
    expect(subtreeHeight(a, [b, c, d])).toBe(3);
    expect(subtreeHeight(c, [d])).toBe(1);
    expect(subtreeHeight(d, [])).toBe(0);
  });

  it('rebases the ancestors of a descendant onto the moved folder’s new place', () => {
    const elsewhere = folder('x', folder('w', root));
    const movedB = { ...b, parentFolderId: elsewhere.id, ancestorIds: [...elsewhere.ancestorIds, elsewhere.id] };

    expect(rebaseAncestorIds(d, b, movedB)).toEqual(['root', 'w', 'x', 'b', 'c']);
    expect(rebaseAncestorIds(c, b, movedB)).toEqual(['root', 'w', 'x', 'b']);
  });
});

describe('Folder items: the folder-item shape and its scopes', () => {
  it('grants view to everyone, edit from contributor, delete from admin', () => {
    expect(folderItemScopes('viewer')).toEqual(['folderItem:view']);
    expect(folderItemScopes('contributor')).toEqual(['folderItem:view', 'folderItem:edit']);
    expect(folderItemScopes('admin')).toEqual(['folderItem:view', 'folderItem:edit', 'folderItem:delete']);
    expect(folderItemScopes('owner')).toEqual(['folderItem:view', 'folderItem:edit', 'folderItem:delete']);
  });

  it('shows exactly the spec fields plus type, with millisecond times and no deletion', () => {
    const record = folder('f', folder('root', null), 'Plans');

    expect(toFolderItem(record, 'viewer')).toEqual({
      id: 'f',
      type: 'folder',
      createdAt: 1,
      modifiedAt: 1,
      deletedAt: null,
      scopes: ['folderItem:view'],
      assignedRoleSlugs: [],
      name: 'Plans',
      parentFolderId: 'root',
      workspaceId: 'ws',
    });
  });
});
