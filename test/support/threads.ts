import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { queryPrefix } from '../../shared/db/core/paging.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { pageCopyPartition, pageCopyRecord } from '../../shared/db/thread-index.js';
import { getConversation } from '../../shared/db/threads.js';
import { VIEW_MODES } from '../../shared/domain/markups/view-modes.js';
import { call } from './api.js';
import { makeMarkup, workspaceOf } from './items.js';

export interface OrgRef {
  organizationId: string;
  workspaceId: string;
}

export const DESKTOP = VIEW_MODES.find((mode) => mode.category === 'desktop')!.id;
export const TABLET = VIEW_MODES.find((mode) => mode.category === 'tablet')!.id;
export const MOBILE = VIEW_MODES.find((mode) => mode.category === 'mobile')!.id;

export const BROWSER_CONTEXT = {
  browserName: 'Firefox',
  browserVersion: '133.0',
  os: 'Linux',
  osVersion: '6.1',
  osVersionName: 'Debian',
  platform: 'desktop',
  screenWidth: 1920,
  screenHeight: 1080,
  viewportWidth: 1440,
  viewportHeight: 900,
};

/** A markup of each type written straight to the table, ready for threads (images, PDF pages and video known). */
export async function makeTypedMarkup(
  org: OrgRef,
  type: MarkupRecord['type'],
  overrides: Partial<MarkupRecord> = {},
): Promise<MarkupRecord> {
  const workspace = await workspaceOf(org.workspaceId);
  const base = { workspaceId: org.workspaceId, organizationId: org.organizationId, parentFolderId: workspace.rootFolderId };
  const file = (name: string, mimeType: string) => ({ key: `test/${randomUUID()}/${name}`, mimeType, filesize: 100 });
  switch (type) {
    case 'webpage':
      return makeMarkup({ ...base, ...overrides });
    case 'image':
      return makeMarkup({
        ...base,
        type: 'image',
        url: undefined,
        images: [
          { id: randomUUID(), ...file('one.png', 'image/png'), width: 800, height: 600 },
          { id: randomUUID(), ...file('two.png', 'image/png'), width: 800, height: 600 },
        ],
        ...overrides,
      });
    case 'pdf':
      return makeMarkup({
        ...base,
        type: 'pdf',
        url: undefined,
        document: { pageCount: 3, pages: [1, 2, 3].map((number) => ({ number, width: 612, height: 792 })) },
        ...overrides,
      });
    case 'video':
      return makeMarkup({
        ...base,
        type: 'video',
        url: undefined,
        video: {
          file: file('video.mp4', 'video/mp4'),
          durationSeconds: 30,
          width: 1280,
          height: 720,
          poster: file('poster.jpg', 'image/jpeg'),
        },
        ...overrides,
      });
  }
}

/** A Delta of one line of text. */
export const delta = (text: string) => ({ ops: [{ insert: `${text}\n` }] });

/** A valid create-thread body for a markup of any type; `overrides` replace fields. */
export function threadBody(markup: MarkupRecord, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const common = {
    projectId: markup.id,
    offsetXPercentage: 25,
    offsetYPercentage: 40,
    message: delta('Please look at this'),
    browserContext: BROWSER_CONTEXT,
  };
  if (markup.type === 'webpage') {
    return {
      ...common,
      isImageThread: false,
      url: markup.url ?? 'https://example.com/',
      canonicalUrl: markup.url ?? 'https://example.com/',
      elements: [{ elementPath: 'html > body > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 }],
      elementParents: [
        { url: markup.url ?? 'https://example.com/', canonicalUrl: markup.url ?? 'https://example.com/', path: 'html > body', depth: 1 },
      ],
      viewModeId: DESKTOP,
      ...overrides,
    };
  }
  return {
    ...common,
    isImageThread: true,
    url: '',
    canonicalUrl: '',
    elements: [],
    elementParents: [],
    viewModeId: '',
    ...(markup.type === 'pdf' ? { pageNumber: 1 } : {}),
    ...overrides,
  };
}

/** Creates a thread through the API and returns it; throws on any other answer than 200. */
export async function createThread(key: string, markup: MarkupRecord, overrides: Record<string, unknown> = {}): Promise<any> {
  const response = await call('POST', '/threads', { key, body: threadBody(markup, overrides) });
  if (response.status !== 200) throw new Error(`creating a thread: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** Adds a reply through the API and returns it. */
export async function reply(key: string, threadId: string, body: Record<string, unknown> = { content: 'A reply' }): Promise<any> {
  const response = await call('POST', `/threads/${threadId}/messages`, { key, body });
  if (response.status !== 200) throw new Error(`replying: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/**
 * The threads of a markup whose page copy (`shared/db/thread-index.ts`, layout 4) is not the thread
 * as stored, and copies left of threads that are gone: empty when every write kept them in step.
 */
export async function pageCopiesOutOfStep(markupId: string): Promise<unknown[]> {
  const [{ threads }, copies] = await Promise.all([
    getConversation(markupId),
    queryPrefix(pageCopyPartition(markupId), undefined, { consistent: true }),
  ]);
  const byNumber = new Map(copies.map((copy) => [Number(copy.number), pageCopyRecord(copy)]));
  const numbers = new Set(threads.map((thread) => thread.number));
  return [
    ...threads
      .filter((thread) => !isDeepStrictEqual(byNumber.get(thread.number), thread))
      .map((thread) => ({ number: thread.number, thread, copy: byNumber.get(thread.number) })),
    ...[...byNumber.keys()].filter((number) => !numbers.has(number)).map((number) => ({ number, stray: byNumber.get(number) })),
  ];
}
