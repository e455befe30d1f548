import type { MarkupRecord } from '../../db/items.js';
import { listMarkupTags } from '../../db/markup-records.js';
import { listMembers } from '../../db/members.js';
import { getUsers, statusOf } from '../../db/users.js';
import type { TagsView } from '../../schemas/markups.js';

/**
 * GET /markups/:id/tag. `taggable`: the active members of the markup's workspace, by name; people
 * merely invited have not joined and cannot be mentioned (`prepareMessage`), so they are left out.
 * `tagged`: the users mentioned in the markup's threads, recorded under `MARKUP#<id>` / `TAGGED#<userId>`.
 */
export async function getMarkupTags(markup: MarkupRecord): Promise<TagsView> {
  const [members, tags] = await Promise.all([listMembers(markup.workspaceId), listMarkupTags(markup.id)]);
  const roles = new Map(members.filter((member) => statusOf(member) === 'active').map((member) => [member.userId, member.role]));
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
