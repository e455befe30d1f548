import { describe, expect, it } from 'vitest';
import { handler as itemsHandler } from '../../functions/items/handler.js';
import { itemsRoutes } from '../../functions/items/routes.js';
import { call, makeOrganization } from '../support/api.js';
import { workspaceOf } from '../support/items.js';
import { makeMember } from '../support/members.js';
import { countRequests, invokeHandler } from '../support/request-count.js';
import { seedConversation } from '../support/thread-seed.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';

/**
 * Child listings (and search results, `unreadThreads`) carry what a markup's card shows (issue 30, items 3 and 6): the card fields of
 * GET /markups/{id} (`markupType`, `thumbnailUrl`, `activeThreads`, `isReady`, the conversion
 * state) and `unreadThreads`, how many of its threads the caller has not read, so the review app
 * opens a folder of N markups with one request instead of N + 1. The unread count drops as the
 * caller reads threads, and rises again when someone else replies.
 */

const items = { name: 'items', routes: itemsRoutes, handler: itemsHandler };

async function childMarkups(key: string, folderId: string): Promise<Map<string, any>> {
  const response = await call('GET', `/items/${folderId}/items`, { key, query: { limit: 100 } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return new Map(response.body.data.items.filter((item: any) => item.type === 'markup').map((item: any) => [item.id, item]));
}

const withoutQuery = (url: string) => url.split('?')[0];

describe('GET /items/{id}/items: each markup with its card (extension fields)', () => {
  it('shows each markup as GET /markups/{id} does: markupType, thumbnailUrl, activeThreads, isReady, conversion state', async () => {
    const org = await makeOrganization();
    const root = (await workspaceOf(org.workspaceId)).rootFolderId;
    const image = await makeTypedMarkup(org, 'image', { name: 'A image' });
    const pdf = await makeTypedMarkup(org, 'pdf', { name: 'B pdf', conversionStatus: 'pending', isReady: false });
    const page = await makeTypedMarkup(org, 'webpage', { name: 'C page' });
    await createThread(org.workspaceKey, image, { message: undefined, content: 'One' });
    await createThread(org.workspaceKey, image, { message: undefined, content: 'Two' });

    const listed = await childMarkups(org.workspaceKey, root);

    for (const markup of [image, pdf, page]) {
      const single = (await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data;
      const child = listed.get(markup.id);
      expect(child, markup.name).toMatchObject({
        type: 'markup',
        markupType: single.type,
        activeThreads: single.activeThreads,
        isReady: single.isReady,
        markupUrl: single.markupUrl,
      });
      // Presigned links differ in their signature's time only.
      expect(withoutQuery(child.thumbnailUrl)).toBe(withoutQuery(single.thumbnailUrl));
      expect(child.conversionStatus).toBe(single.conversionStatus);
    }
    expect(listed.get(image.id).activeThreads).toBe(2);
    expect(listed.get(pdf.id)).toMatchObject({ markupType: 'pdf', isReady: false, conversionStatus: 'pending' });
  });

  it('ttl sets the lifetime of the listed thumbnail links', async () => {
    const org = await makeOrganization();
    const root = (await workspaceOf(org.workspaceId)).rootFolderId;
    const image = await makeTypedMarkup(org, 'image');

    const response = await call('GET', `/items/${root}/items`, { key: org.workspaceKey, query: { ttl: 120 } });
    const thumbnail = new URL(response.body.data.items.find((item: any) => item.id === image.id).thumbnailUrl);

    expect(thumbnail.searchParams.get('X-Amz-Expires')).toBe('120');
  });

  it("counts the caller's unread threads per markup; reading clears them, another's reply brings one back", async () => {
    const org = await makeOrganization();
    const root = (await workspaceOf(org.workspaceId)).rootFolderId;
    const reader = await makeMember(org.workspaceId, 'contributor', 'reader');
    const busy = await makeTypedMarkup(org, 'image', { name: 'Busy' });
    const quiet = await makeTypedMarkup(org, 'image', { name: 'Quiet' });
    const first = await createThread(org.workspaceKey, busy, { message: undefined, content: 'First' });
    const second = await createThread(org.workspaceKey, busy, { message: undefined, content: 'Second' });
    const resolved = await createThread(org.workspaceKey, busy, { message: undefined, content: 'Resolved one' });
    expect((await call('POST', `/threads/${resolved.id}/resolve`, { key: org.workspaceKey })).status).toBe(200);

    // The writer has read what it wrote; the reader has read nothing (resolved threads count too).
    expect((await childMarkups(org.workspaceKey, root)).get(busy.id).unreadThreads).toBe(0);
    const before = await childMarkups(reader.key, root);
    expect(before.get(busy.id).unreadThreads).toBe(3);
    expect(before.get(quiet.id).unreadThreads).toBe(0);

    expect((await call('POST', `/threads/${first.id}/read`, { key: reader.key })).status).toBe(204);
    expect((await childMarkups(reader.key, root)).get(busy.id).unreadThreads).toBe(2);

    // Reading the thread's one message, not the thread, leaves the thread unread (as GET /threads says).
    expect((await call('POST', `/messages/${second.messages[0].id}/read`, { key: reader.key })).status).toBe(204);
    const afterMessage = (await childMarkups(reader.key, root)).get(busy.id).unreadThreads;
    const listedThreads = (await call('GET', '/threads', { key: reader.key, query: { markupId: busy.id, limit: 100 } })).body.data.threads;
    expect(afterMessage).toBe(listedThreads.filter((thread: any) => thread.read === false).length);

    await Promise.all([second, resolved].map((thread) => call('POST', `/threads/${thread.id}/read`, { key: reader.key })));
    expect((await childMarkups(reader.key, root)).get(busy.id).unreadThreads).toBe(0);

    // A reply by someone else makes its thread unread again for the reader, not for the writer.
    await reply(org.workspaceKey, first.id, { message: undefined, content: 'Any news?' });
    expect((await childMarkups(reader.key, root)).get(busy.id).unreadThreads).toBe(1);
    expect((await childMarkups(org.workspaceKey, root)).get(busy.id).unreadThreads).toBe(0);
    // The reader replies in a thread it had read: still read for it.
    await reply(reader.key, second.id, { message: undefined, content: 'Done' });
    expect((await childMarkups(reader.key, root)).get(busy.id).unreadThreads).toBe(1);
    expect((await childMarkups(org.workspaceKey, root)).get(busy.id).unreadThreads).toBe(1);
  });

  // Hundreds of requests: 19 s in a full run on two loaded cores.
  it(
    'the count is always what GET /threads says, for every reader, through random replies, edits, deletions, resolutions and reads, on a markup of today and one of layout 2 (3 rounds)',
    { timeout: 120_000 },
    async () => {
      for (let round = 0; round < 3; round += 1) {
        const org = await makeOrganization();
        const root = (await workspaceOf(org.workspaceId)).rootFolderId;
        const people = [
          { key: org.workspaceKey, userId: org.workspaceKeyUserId },
          await makeMember(org.workspaceId, 'contributor', 'first-reader'),
          await makeMember(org.workspaceId, 'contributor', 'second-reader'),
        ];
        const today = await makeTypedMarkup(org, 'image', { name: 'Today' });
        for (let index = 0; index < 6; index += 1)
          await createThread(people[index % 3]!.key, today, { message: undefined, content: `Thread ${index}` });
        const older = await makeTypedMarkup(org, 'image', { name: 'Layout 2' });
        await seedConversation(older, {
          count: 6,
          authorIds: people.map((person) => person.userId),
          layout: '2',
          readBy: people[1]!.userId,
        });
        const threadIds = async (markupId: string) =>
          (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId, limit: 100 } })).body.data.threads.map(
            (thread: any) => thread.id,
          );
        const threads = [...(await threadIds(today.id)), ...(await threadIds(older.id))] as string[];
        expect(threads).toHaveLength(12);

        let seed = round + 1;
        const pick = <T>(list: readonly T[]): T => {
          seed = (seed * 48271) % 2147483647;
          return list[seed % list.length]!;
        };
        const act = async () => {
          const person = pick(people);
          const threadId = pick(threads);
          const messages = ((await call('GET', `/threads/${threadId}`, { key: person.key })).body.data?.messages ?? []) as any[];
          // A thread whose first message went is gone with it.
          if (messages.length === 0) return;
          const own = messages.filter((message) => message.userId === person.userId);
          const kind = pick(['reply', 'edit', 'delete', 'resolve', 'unresolve', 'readThread', 'readThread', 'readMessage', 'readMessage']);
          const response =
            kind === 'reply'
              ? await call('POST', `/threads/${threadId}/messages`, { key: person.key, body: { content: 'A reply' } })
              : kind === 'edit' && own.length > 0
                ? await call('PATCH', `/messages/${pick(own).id}`, { key: person.key, body: { content: 'Edited' } })
                : kind === 'delete' && own.length > 0 && messages.length > 1
                  ? await call('DELETE', `/messages/${pick(own.filter((message) => message.id !== messages[0].id).concat(own)).id}`, {
                      key: person.key,
                    })
                  : kind === 'resolve' || kind === 'unresolve'
                    ? await call('POST', `/threads/${threadId}/${kind}`, { key: person.key })
                    : kind === 'readMessage'
                      ? await call('POST', `/messages/${pick(messages).id}/read`, { key: person.key })
                      : await call('POST', `/threads/${threadId}/read`, { key: person.key });
          expect(response.status, `${kind}: ${JSON.stringify(response.body)}`).toBeLessThan(500);
        };
        for (let step = 0; step < 8; step += 1) {
          for (let move = 0; move < 5; move += 1) await act();
          for (const person of people) {
            const listed = await childMarkups(person.key, root);
            for (const markup of [today, older]) {
              const page = (await call('GET', '/threads', { key: person.key, query: { markupId: markup.id, limit: 100 } })).body.data
                .threads;
              const unread = page.filter((thread: any) => thread.read === false).length;
              expect(listed.get(markup.id).unreadThreads, `round ${round}, step ${step}, ${markup.name}`).toBe(unread);
            }
          }
        }
      }
    },
  );

  it('GET /markups/search carries the same unread count per markup', async () => {
    const org = await makeOrganization();
    const root = (await workspaceOf(org.workspaceId)).rootFolderId;
    const reader = await makeMember(org.workspaceId, 'viewer', 'searcher');
    const name = `Findable ${Math.random().toString(36).slice(2, 8)}`;
    const markup = await makeTypedMarkup(org, 'image', { name });
    const threads = [
      await createThread(org.workspaceKey, markup, { message: undefined, content: 'One' }),
      await createThread(org.workspaceKey, markup, { message: undefined, content: 'Two' }),
    ];
    const search = async () => (await call('GET', '/markups/search', { key: reader.key, query: { query: name } })).body.data.data;

    expect((await search()).map((found: any) => [found.id, found.unreadThreads])).toEqual([[markup.id, 2]]);
    await call('POST', `/threads/${threads[1].id}/read`, { key: reader.key });
    expect((await search())[0].unreadThreads).toBe(1);
    expect((await childMarkups(reader.key, root)).get(markup.id).unreadThreads).toBe(1);
  });

  it('a listing whose counts are current costs the same DynamoDB calls for 2 markups as for 12', async () => {
    const org = await makeOrganization();
    const workspace = await workspaceOf(org.workspaceId);
    const folder = async (name: string, markups: number) => {
      const created = await call('POST', '/items', { key: org.workspaceKey, body: { parentFolderId: workspace.rootFolderId, name } });
      for (let index = 0; index < markups; index += 1) {
        const markup = await makeTypedMarkup(org, 'image', { parentFolderId: created.body.data.id, name: `${name} ${index}` });
        if (index % 2 === 0) await createThread(org.workspaceKey, markup, { message: undefined, content: `On ${name} ${index}` });
      }
      return created.body.data.id as string;
    };
    const [small, large] = [await folder('Small', 2), await folder('Large', 12)];
    const list = (folderId: string) =>
      countRequests(() => invokeHandler(items, 'GET', `/items/${folderId}/items`, { key: org.workspaceKey, query: { limit: 100 } }));
    // The first listing counts each conversation once and keeps the counts.
    const [coldSmall, coldLarge] = [await list(small), await list(large)];
    const [warmSmall, warmLarge] = [await list(small), await list(large)];

    expect(coldLarge.result.status).toBe(200);
    expect(warmLarge.result.body.data.items).toHaveLength(12);
    expect(warmLarge.result.body.data.items.map((item: any) => item.unreadThreads)).toEqual(
      coldLarge.result.body.data.items.map((item: any) => item.unreadThreads),
    );
    expect(warmLarge.counts).toEqual(warmSmall.counts);
    expect(warmLarge.counts.QueryCommand ?? 0).toBe(warmSmall.counts.QueryCommand ?? 0);
    expect(warmLarge.total).toBeLessThanOrEqual(8);
    console.info(
      `child listing DynamoDB calls: 2 markups cold ${coldSmall.total}; 12 markups cold ${coldLarge.total} (${JSON.stringify(coldLarge.counts)}), warm ${warmLarge.total} (${JSON.stringify(warmLarge.counts)}); 2 markups warm ${warmSmall.total}`,
    );
  });
});
