import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../infra/local/stack.js';
import { getItem, type MarkupRecord } from '../../shared/db/items.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { makeMarkup } from '../support/items.js';
import { eventually } from '../support/polling.js';

/** Stacks of this file's own, one after the other on one DATA_DIR (the run's shared stack is not restarted). */
const dataDir = mkdtempSync(join(tmpdir(), 'review-board-sweep-restart-'));
let running: LocalStack | undefined;

afterAll(async () => {
  await running?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the local stack runs the pending-work sweep as it starts (docs/local-stack.md, "What runs": the scheduled functions)', () => {
  it('queues, on restart, the job a stopped stack never queued: a webpage markup committed with its thumbnail pending gets its thumbnail settled', async () => {
    running = await startLocalStack({ port: 0, dataDir, memory: false });
    const workspace = (await getWorkspace(running.stack.workspaceId))!;
    // Committed as the creating request would, which then died before queueing the thumbnail job.
    const markup = await makeMarkup({
      workspaceId: workspace.id,
      organizationId: workspace.organizationId,
      parentFolderId: workspace.rootFolderId,
      url: 'http://127.0.0.1:9/never-rendered',
      thumbnailState: 'pending',
      workStartedAt: undefined,
    });
    await running.stop();
    running = undefined;

    running = await startLocalStack({ port: 0, dataDir, memory: false });
    const settled = (await eventually(
      () => getItem(markup.id, true),
      (current) => (current as MarkupRecord | undefined)?.thumbnailState !== 'pending',
      60_000,
    )) as MarkupRecord;

    expect(settled.thumbnailState).not.toBe('pending');
    expect(settled.workStartedAt).toEqual(expect.any(Number));
  }, 240_000);
});
