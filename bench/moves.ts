import { randomUUID } from 'node:crypto';
import type { StackInfo } from '../infra/local/stack.js';
import { getMove } from '../shared/db/moves.js';
import { toItem } from '../shared/db/items.js';
import { batchPut } from '../shared/db/core/transact.js';
import { getWorkspace } from '../shared/db/workspaces.js';
import { markupRecord } from '../test/support/items.js';

/** DESIGN.md "Moves across workspaces are durable": the bound on the answer of a large move. */
const ANSWER_BOUND_MS = 2_000;

/**
 * Issue 28's row: a folder tree of `markups` markups (a folder and four subfolders, the markups
 * spread over them) moved into another workspace with PATCH /items/{id}/move. Two figures: the
 * answer (the move is recorded and its job queued) and the completion (the move worker carried
 * every folder and markup, in batches, and the move record says done). Markups are written
 * straight to the table, as the item tests write them; the folders go through the API.
 */
export async function benchMoves(stack: StackInfo, options: { runs: number; markups: number; warmUpMarkups?: number }): Promise<void> {
  const headers = {
    'Service-API-Version': '2023-02-22',
    'Content-Type': 'application/json',
    Authorization: `Bearer ${stack.organizationApiKey}`,
  };
  const request = async (method: string, path: string, body: unknown): Promise<{ status: number; data: any }> => {
    const response = await fetch(`${stack.baseUrl}/api/v2${path}`, { method, headers, body: JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return { status: response.status, data: (JSON.parse(text) as { data: unknown }).data };
  };
  const source = await getWorkspace(stack.workspaceId);
  if (!source) throw new Error('the seeded workspace is missing');
  // A small move first (reported as such): the first move of a fresh stack also pays for the code's first run.
  const sizes = [...(options.warmUpMarkups ? [options.warmUpMarkups] : []), ...Array<number>(options.runs).fill(options.markups)];
  for (const [run, size] of sizes.entries()) {
    const destination = (await request('POST', '/workspace', { name: `Move bench ${run} ${randomUUID().slice(0, 6)}` })).data as {
      id: string;
      rootFolderId: string;
    };
    const top = (await request('POST', '/items', { parentFolderId: source.rootFolderId, name: `Move bench ${run}` })).data as {
      id: string;
    };
    const folders = [top.id];
    for (const name of ['A', 'B', 'C', 'D'])
      folders.push((await request('POST', '/items', { parentFolderId: top.id, name })).data.id as string);
    const at = Date.now();
    const markups = Array.from({ length: size }, (_, i) =>
      markupRecord({
        workspaceId: source.id,
        organizationId: source.organizationId,
        parentFolderId: folders[i % folders.length]!,
        name: `Page ${i}`,
        createdAt: at + i,
        modifiedAt: at + i,
        activityAt: at + i,
        url: `https://example.com/${i}`,
      }),
    );
    await batchPut(markups.map(toItem));

    const started = performance.now();
    await request('PATCH', `/items/${top.id}/move`, { parentFolderId: destination.rootFolderId });
    const answered = performance.now() - started;
    let move = await getMove(top.id);
    while (move?.state !== 'done') {
      if (performance.now() - started > 600_000)
        throw new Error(`the move of ${size} markups was not done within 10 minutes: ${JSON.stringify(move)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      move = await getMove(top.id);
    }
    const completed = performance.now() - started;
    if (move.carriedMarkups !== size) throw new Error(`the move carried ${move.carriedMarkups} of ${size} markups`);
    const name = `move of ${size} markups across workspaces${size === options.markups ? '' : ' (warm-up)'}`;
    const verdict =
      answered < ANSWER_BOUND_MS ? `under the ${ANSWER_BOUND_MS / 1000} s bound` : `OVER the ${ANSWER_BOUND_MS / 1000} s bound`;
    process.stdout.write(
      `${name.padEnd(56)} answer ${answered.toFixed(0).padStart(6)} ms (${verdict})   completed ${completed.toFixed(0).padStart(7)} ms   (${move.batches} batches)\n`,
    );
  }
}
