import type { MarkupRecord } from '../../db/items.js';
import { listMarkupTags } from '../../db/markup-records.js';
import { queryPrefix } from '../../db/paging.js';
import { getUsers, memberKey, type Role } from '../../db/users.js';

export interface TaggableUser {
  id: string;
  name: string;
  email: string | null;
  role: Role;
}

export interface TaggedUser {
  id: string;
  name: string;
  email: string;
}

/**
 * GET /markups/:id/tag. `taggable`: the members of the markup's workspace (member records under
 * `WS#<wsId>`), by name. `tagged`: the users mentioned in the markup's threads, recorded under
 * `MARKUP#<id>` / `TAGGED#<userId>`.
 */
export async function getMarkupTags(markup: MarkupRecord): Promise<{ taggable: TaggableUser[]; tagged: TaggedUser[] }> {
  const memberPrefix = memberKey(markup.workspaceId, '').SK;
  const [members, tags] = await Promise.all([
    queryPrefix(memberKey(markup.workspaceId, '').PK, memberPrefix),
    listMarkupTags(markup.id),
  ]);
  const roles = new Map(members.map((member) => [member.userId as string, member.role as Role]));
  const users = new Map((await getUsers([...roles.keys(), ...tags.map((tag) => tag.userId as string)])).map((user) => [user.id, user]));
  const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
  const taggable = [...roles].flatMap(([userId, role]) => {
    const user = users.get(userId);
    return user ? [{ id: user.id, name: user.name, email: user.email, role }] : [];
  });
  const tagged = tags.flatMap((tag) => {
    const user = users.get(tag.userId as string);
    return user ? [{ id: user.id, name: user.name, email: user.email ?? '' }] : [];
  });
  return { taggable: taggable.sort(byName), tagged: tagged.sort(byName) };
}
