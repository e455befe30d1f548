import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { servicesFile, useLocalServices, type ServicesInfo } from '../../infra/local/stack.js';
import { getItem } from '../../shared/db/items.js';
import { getMove } from '../../shared/db/moves.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { VERSION } from '../support/api.js';
import { makeMarkups, workspaceMarkupIds, workspaceOf } from '../support/items.js';
import { eventually } from '../support/polling.js';
import { startStack, type StartedStack } from '../support/processes.js';

/**
 * The reviewer's case, at several kill points: a tree of 7 folders and 140 markups moved into
 * another workspace, the whole local stack (its process group) killed with SIGKILL some time after
 * the move request, as an operator would, and started again on the same DATA_DIR.
 */
const KILL_POINTS = [
  { after: 'the request', ms: 0 },
  { after: 'the request', ms: 400 },
  { after: 'the request', ms: 1000 },
  // After the answer the move is recorded and its worker carrying: these land in or around its batches.
  { after: 'the answer', ms: 0 },
  { after: 'the answer', ms: 100 },
  { after: 'the answer', ms: 300 },
  // Once the destination holds some of the markups and not all (a larger tree: two batches of the worker).
  { after: 'a partial carry', ms: 0 },
] as const;
const FOLDERS = 7;
const MARKUPS_PER_FOLDER = 20;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function api(stack: StartedStack, method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${stack.stack.baseUrl}/api/v2${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      'Service-API-Version': VERSION,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Points this process's clients at the stack started on `dataDir` (its emulators' ports change with every start). */
function useStack(dataDir: string): void {
  useLocalServices(JSON.parse(readFileSync(servicesFile(dataDir), 'utf8')) as ServicesInfo);
}

/** SIGKILL to the stack's whole process group (npm, node, DynamoDB Local's JVM), and its exit. */
async function killGroup(stack: StartedStack): Promise<void> {
  const running = stack.child.exitCode === null && stack.child.signalCode === null;
  const exited = running ? new Promise((resolve) => stack.child.once('exit', resolve)) : undefined;
  try {
    process.kill(-stack.child.pid!, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
  await exited;
}

describe('A move into another workspace survives a kill -9 of the local stack at any point', { timeout: 900_000 }, () => {
  for (const { after, ms } of KILL_POINTS) {
    it(`killed ${ms} ms after ${after}: after the restart every item is in the destination exactly once, counted right, refused to the source's key`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'review-board-move-crash-'));
      dirs.push(dataDir);
      let stack = await startStack(dataDir);
      try {
        useStack(dataDir);
        const { organizationApiKey: orgKey, workspaceApiKey: sourceKey, workspaceId: sourceId } = stack.stack;
        const source = await workspaceOf(sourceId);
        const created = await api(stack, 'POST', '/workspace', orgKey, { name: 'Destination' });
        expect(created.status).toBe(201);
        const destination = created.body.data as { id: string; rootFolderId: string };
        const destinationKey = (await createWorkspaceKey(destination.id)).apiKey;
        // Project > A > A1 > A2, Project > B, Project > C, Project > D: 7 folders, 20 markups each.
        const folders: { id: string; parent: string }[] = [];
        const add = async (parent: string, name: string) => {
          const folder = await api(stack, 'POST', '/items', orgKey, { parentFolderId: parent, name });
          expect(folder.status).toBe(200);
          folders.push({ id: folder.body.data.id, parent });
          return folder.body.data.id as string;
        };
        const top = await add(source.rootFolderId, 'Project');
        const a = await add(top, 'A');
        const a1 = await add(a, 'A1');
        await add(a1, 'A2');
        for (const name of ['B', 'C', 'D']) await add(top, name);
        expect(folders).toHaveLength(FOLDERS);
        const perFolder = after === 'a partial carry' ? 10 * MARKUPS_PER_FOLDER : MARKUPS_PER_FOLDER;
        const markups = (
          await Promise.all(
            folders.map((folder) =>
              makeMarkups(perFolder, { workspaceId: sourceId, organizationId: stack.stack.organizationId, parentFolderId: folder.id }),
            ),
          )
        ).flat();

        const request = api(stack, 'PATCH', `/items/${top}/move`, orgKey, { parentFolderId: destination.rootFolderId }).catch(
          () => undefined,
        );
        if (after === 'the answer') expect((await request)?.status).toBe(200);
        let carriedBeforeKill: number | undefined;
        if (after === 'a partial carry') {
          const seen = await eventually(
            () => workspaceMarkupIds(destination.id),
            (ids) => ids.size > 0,
            60_000,
          );
          carriedBeforeKill = seen.size;
          expect(carriedBeforeKill).toBeGreaterThan(0);
          expect(carriedBeforeKill).toBeLessThan(markups.length);
        }
        // The kill point (not a wait for a result): the request, its commit or its worker is cut off here.
        await new Promise((resolve) => setTimeout(resolve, ms));
        await killGroup(stack);
        const answered = await request;

        stack = await startStack(dataDir);
        useStack(dataDir);
        const before = await getMove(top);
        const committed = before !== undefined;
        // A request killed before its commit moved nothing: the user repeats it, as they would.
        if ((await getItem(top, true))?.workspaceId === sourceId) {
          expect((await api(stack, 'PATCH', `/items/${top}/move`, orgKey, { parentFolderId: destination.rootFolderId })).status).toBe(200);
        }
        const move = await eventually(
          () => getMove(top),
          (record) => record?.state === 'done',
          120_000,
        );
        expect(move?.state, `answered before the kill: ${answered?.status}`).toBe('done');

        const inDestination = await workspaceMarkupIds(destination.id);
        expect([...inDestination].sort()).toEqual(markups.map((markup) => markup.id).sort());
        expect((await workspaceMarkupIds(sourceId)).size).toBe(0);
        for (const item of [...folders, ...markups]) expect((await getItem(item.id, true))?.workspaceId).toBe(destination.id);
        for (const folder of folders) {
          const parent = folder.parent === source.rootFolderId ? destination.rootFolderId : folder.parent;
          const listed = await api(stack, 'GET', `/items/${parent}/items`, destinationKey, undefined);
          expect(listed.status).toBe(200);
          const shown = listed.body.data.items.find((item: { id: string }) => item.id === folder.id);
          const subfolders = folders.filter((other) => other.parent === folder.id).length;
          expect(shown).toMatchObject({ projectCount: perFolder, folderCount: subfolders, workspaceId: destination.id });
        }
        for (const item of [...folders, ...markups]) {
          expect((await api(stack, 'GET', `/items/${item.id}`, sourceKey)).status, item.id).toBe(403);
        }
        for (const item of [...folders, ...markups.slice(0, 10)])
          expect((await api(stack, 'GET', `/items/${item.id}`, destinationKey)).status).toBe(200);
        expect((await api(stack, 'POST', `/markups/${markups[0]!.id}`, destinationKey, { name: 'Renamed after the crash' })).status).toBe(
          200,
        );
        console.info(
          `move killed ${ms} ms after ${after} (request answered ${answered?.status ?? 'nothing'}; ${committed ? `recorded, ${before!.state}` : 'not committed, repeated'}${carriedBeforeKill === undefined ? '' : `; ${carriedBeforeKill} of ${markups.length} markups in the destination before the kill`}): done in ${move?.batches} batches`,
        );
      } finally {
        await killGroup(stack);
      }
    });
  }
});
