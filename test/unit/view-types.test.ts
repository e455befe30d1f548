import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { FolderRecord } from '../../shared/db/items.js';
import type { ThreadRecord } from '../../shared/db/threads.js';
import type { UploadRecord } from '../../shared/db/uploads.js';
import type { createThread } from '../../shared/domain/comments/create-thread.js';
import type { movePin } from '../../shared/domain/comments/change-thread.js';
import type { createMessage, readMessage, updateMessage } from '../../shared/domain/comments/messages.js';
import type { getThread, listThreads } from '../../shared/domain/comments/read-threads.js';
import type {
  attachScreenshot,
  getScreenshot,
  issueScreenshotPolicy,
  toPublicScreenshot,
} from '../../shared/domain/comments/screenshots.js';
import { threadRecordOf, type toPublicMessage, type toPublicThread } from '../../shared/domain/comments/views.js';
import type { describeItem } from '../../shared/domain/items/read.js';
import { toChildItem, toFolderItem } from '../../shared/domain/items/views.js';
import type { toPublicMarkup, toPublicMarkups } from '../../shared/domain/markups/view.js';
import { describeUpload, type completeUpload, type issueUploadPolicy } from '../../shared/domain/uploads/uploads.js';
import type { EventEnvelope } from '../../shared/domain/webhooks/events.js';
import { ChildFolderSchema, ChildMarkupSchema, FolderItemSchema, ItemSchema } from '../../shared/schemas/items.js';
import { MarkupEventBodySchema } from '../../functions/markups/schemas.js';
import type { getMarkupTags } from '../../shared/domain/markups/tags.js';
import type { getMarkupUsage } from '../../shared/domain/markups/usage.js';
import type { listViewModes } from '../../shared/domain/markups/view-modes.js';
import type { archiveMarkupOriginal, originalDownload } from '../../shared/domain/markups/originals.js';
import {
  ArchivedOriginalSchema,
  MarkupSchema,
  OriginalDownloadSchema,
  TagsSchema,
  UsageSchema,
  ViewModeSchema,
} from '../../shared/schemas/markups.js';
import {
  MessageSchema,
  ScreenshotPolicySchema,
  ScreenshotSchema,
  ThreadPageSchema,
  ThreadRecordSchema,
  ThreadRecordViewSchema,
  ThreadSchema,
} from '../../shared/schemas/threads.js';
import { UploadedFileSchema, UploadPolicySchema } from '../../shared/schemas/uploads.js';

type Answer<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
type Out<S extends v.GenericSchema> = v.InferOutput<S>;

/**
 * The domain's views are typed by the answer schemas the OpenAPI document is built from: a view
 * that drifts from its schema (a field renamed, left out, of another type) fails `tsc`. These
 * assertions are checked by the compiler (`npx tsc --noEmit`), the runtime ones below by vitest.
 */
describe('views are their answer schemas', () => {
  it('types threads, messages and screenshots by their schemas', () => {
    expectTypeOf<Answer<typeof toPublicThread>>().toEqualTypeOf<Out<typeof ThreadSchema>>();
    expectTypeOf<Answer<typeof createThread>>().toEqualTypeOf<Out<typeof ThreadSchema>>();
    expectTypeOf<Answer<typeof getThread>['thread']>().toEqualTypeOf<Out<typeof ThreadSchema>>();
    expectTypeOf<Answer<typeof listThreads>>().toEqualTypeOf<Out<typeof ThreadPageSchema>>();
    expectTypeOf<Answer<typeof toPublicMessage>>().toEqualTypeOf<Out<typeof MessageSchema>>();
    expectTypeOf<Answer<typeof createMessage>>().toEqualTypeOf<Out<typeof MessageSchema>>();
    expectTypeOf<Answer<typeof updateMessage>['message']>().toEqualTypeOf<Out<typeof MessageSchema>>();
    expectTypeOf<Answer<typeof readMessage>['message']>().toEqualTypeOf<Out<typeof MessageSchema>>();
    expectTypeOf<Answer<typeof toPublicScreenshot>>().toEqualTypeOf<Out<typeof ScreenshotSchema>>();
    expectTypeOf<Answer<typeof attachScreenshot>>().toEqualTypeOf<Out<typeof ScreenshotSchema>>();
    expectTypeOf<Answer<typeof getScreenshot>>().toEqualTypeOf<Out<typeof ScreenshotSchema>>();
    expectTypeOf<Answer<typeof issueScreenshotPolicy>>().toEqualTypeOf<Out<typeof ScreenshotPolicySchema>>();
    // The documented thread record is any object; the view says which fields each pin type has.
    expectTypeOf<Answer<typeof movePin>>().toMatchTypeOf<Out<typeof ThreadRecordSchema>>();
    expectTypeOf<Answer<typeof movePin>>().not.toEqualTypeOf<Out<typeof ThreadRecordSchema>>();
  });

  it('types markups, uploads and items by their schemas', () => {
    expectTypeOf<Answer<typeof toPublicMarkup>>().toEqualTypeOf<Out<typeof MarkupSchema>>();
    expectTypeOf<Answer<typeof toPublicMarkups>>().toEqualTypeOf<Out<typeof MarkupSchema>[]>();
    expectTypeOf<Answer<typeof getMarkupUsage>>().toEqualTypeOf<Out<typeof UsageSchema>>();
    expectTypeOf<Answer<typeof getMarkupTags>>().toEqualTypeOf<Out<typeof TagsSchema>>();
    expectTypeOf<Answer<typeof listViewModes>>().toEqualTypeOf<Out<typeof ViewModeSchema>[]>();
    expectTypeOf<Answer<typeof archiveMarkupOriginal>>().toEqualTypeOf<Out<typeof ArchivedOriginalSchema>>();
    expectTypeOf<Answer<typeof originalDownload>>().toEqualTypeOf<Out<typeof OriginalDownloadSchema>>();
    expectTypeOf<Answer<typeof issueUploadPolicy>>().toEqualTypeOf<Out<typeof UploadPolicySchema>>();
    expectTypeOf<Answer<typeof completeUpload>>().toEqualTypeOf<Out<typeof UploadedFileSchema>>();
    expectTypeOf<Answer<typeof describeItem>>().toEqualTypeOf<Out<typeof ItemSchema>>();
    expectTypeOf<Answer<typeof toFolderItem>>().toEqualTypeOf<Out<typeof FolderItemSchema>>();
    expectTypeOf<Answer<typeof toChildItem>>().toEqualTypeOf<Out<typeof ChildFolderSchema> | Out<typeof ChildMarkupSchema>>();
  });

  it('builds webhook bodies from the same views', () => {
    expectTypeOf<EventEnvelope['data']['markup']>().toEqualTypeOf<Out<typeof MarkupSchema> | null>();
    expectTypeOf<EventEnvelope['data']['comment']>().toEqualTypeOf<Out<typeof ThreadSchema> | null | undefined>();
    expectTypeOf<EventEnvelope['data']['message']>().toEqualTypeOf<Out<typeof MessageSchema> | null | undefined>();
    expectTypeOf<Omit<EventEnvelope, 'type'>>().toMatchTypeOf<Omit<Out<typeof MarkupEventBodySchema>, 'type'>>();
  });

  it('answers what the schemas accept, field for field', () => {
    const at = 1_700_000_000_000;
    const upload = {
      fileId: '3f2b8c1e-6d4a-4f0b-9c5e-2a7d1e8b4c60',
      key: 'uploads/w/f/a.png',
      contentType: 'image/png',
      filesize: 10,
      filename: 'a.png',
      resourceType: 'markup_asset',
      resourceId: 'r',
      workspaceId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      width: 4,
      height: 3,
    } as UploadRecord;
    expect(v.parse(v.strictObject(UploadedFileSchema.entries), describeUpload(upload))).toEqual(describeUpload(upload));
    const folder = {
      kind: 'folder',
      id: '3f2b8c1e-6d4a-4f0b-9c5e-2a7d1e8b4c60',
      name: 'Designs',
      createdAt: at,
      modifiedAt: at,
      parentFolderId: null,
      workspaceId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
    } as FolderRecord;
    expect(v.parse(v.strictObject(FolderItemSchema.entries), toFolderItem(folder, 'viewer'))).toEqual(toFolderItem(folder, 'viewer'));
    const child = toChildItem(folder, 'owner', 'https://app.example.com', { folderCount: 1, projectCount: 2 });
    expect(v.parse(v.strictObject(ChildFolderSchema.entries), child)).toEqual(child);
    const base = { id: 't', userId: 'u', markupId: 'm', number: 3, resolved: false, offsetXPercentage: 10, offsetYPercentage: 20 };
    for (const thread of [
      {
        ...base,
        kind: 'webpage',
        url: 'https://example.com/pricing?plan=pro',
        canonicalUrl: 'https://example.com/pricing',
        viewModeId: 'v',
      },
      { ...base, kind: 'pdf', pageNumber: 2 },
      { ...base, kind: 'image', projectImageId: 'i', startTime: 1 },
    ] as ThreadRecord[]) {
      // v.object drops keys it does not declare, so a view with a field its schema lacks differs after the parse.
      expect(v.parse(ThreadRecordViewSchema, threadRecordOf(thread))).toEqual(threadRecordOf(thread));
    }
  });
});
