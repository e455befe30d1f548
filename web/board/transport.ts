import type { Member, Message, PageLayout, Placement, Thread, ViewMode } from './types.js';
import { uploadThroughPolicy } from './upload.js';

/**
 * How the board talks to the API: one `request` function (the app's wrapper with the session
 * token; the embeddable client's with its exchange token) answering the envelope's `data` and
 * throwing an error whose `message` is the problem's `detail`.
 */
export type Request = <T>(path: string, options?: { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown }) => Promise<T>;

export interface BoardTransport {
  listThreads(markupId: string): Promise<Thread[]>;
  getThread(threadId: string): Promise<Thread>;
  createImageThread(markupId: string, placement: Placement, content: string, mentionIds?: string[]): Promise<Thread>;
  /** A reply; `attachmentIds` are confirmed `message_attachment` uploads of the markup (`uploadAttachment`). */
  reply(threadId: string, content: string, mentionIds?: string[], attachmentIds?: string[]): Promise<Message>;
  /** Uploads a file for a message of the markup (presigned flow); answers its file id. */
  uploadAttachment(markupId: string, file: File, onProgress: (fraction: number) => void): Promise<string>;
  resolve(threadId: string): Promise<void>;
  reopen(threadId: string): Promise<void>;
  markRead(threadId: string): Promise<void>;
  editMessage(messageId: string, content: string): Promise<void>;
  deleteMessage(messageId: string): Promise<void>;
  deleteThread(threadId: string): Promise<void>;
  viewModes(markupId: string): Promise<ViewMode[]>;
  /** A webpage markup's page screenshot layout at one view mode. */
  pageLayout(markupId: string, viewModeId: string): Promise<PageLayout>;
  /** Who can be mentioned (active workspace members); absent where the caller cannot list them (end users), so nothing offers mentions. */
  taggable?(markupId: string): Promise<Member[]>;
}

const PAGE = 500;

export function boardTransport(request: Request): BoardTransport {
  const id = encodeURIComponent;
  return {
    async listThreads(markupId) {
      const threads: Thread[] = [];
      let offset = 0;
      // Every thread of the markup, pinned order; pages of the API's maximum.
      for (;;) {
        const page = await request<{ threads: Thread[]; total: number }>(
          `/threads?markupId=${id(markupId)}&limit=${PAGE}&offset=${offset}&order=pin_asc`,
        );
        threads.push(...page.threads);
        offset += page.threads.length;
        if (page.threads.length === 0 || offset >= page.total) return threads;
      }
    },
    getThread: (threadId) => request<Thread>(`/threads/${id(threadId)}`),
    createImageThread: (markupId, placement, content, mentionIds = []) =>
      request<Thread>('/threads', {
        method: 'POST',
        body: { ...pinBody(markupId, placement), content, ...(mentionIds.length ? { mentionIds } : {}) },
      }),
    reply: (threadId, content, mentionIds = [], attachmentIds = []) =>
      request<Message>(`/threads/${id(threadId)}/messages`, {
        method: 'POST',
        body: {
          content,
          ...(mentionIds.length ? { mentionIds } : {}),
          ...(attachmentIds.length ? { attachments: attachmentIds.map((fileId) => ({ fileId })) } : {}),
        },
      }),
    uploadAttachment: (markupId, file, onProgress) =>
      uploadThroughPolicy(request, { resourceType: 'message_attachment', resourceId: markupId }, file, onProgress),
    resolve: async (threadId) => void (await request(`/threads/${id(threadId)}/resolve`, { method: 'POST' })),
    reopen: async (threadId) => void (await request(`/threads/${id(threadId)}/unresolve`, { method: 'POST' })),
    markRead: async (threadId) => void (await request(`/threads/${id(threadId)}/read`, { method: 'POST' })),
    editMessage: async (messageId, content) => void (await request(`/messages/${id(messageId)}`, { method: 'PATCH', body: { content } })),
    deleteMessage: async (messageId) => void (await request(`/messages/${id(messageId)}`, { method: 'DELETE' })),
    deleteThread: async (threadId) => void (await request(`/threads/${id(threadId)}`, { method: 'DELETE' })),
    taggable: async (markupId) => (await request<{ taggable: Member[] }>(`/markups/${id(markupId)}/tag`)).taggable,
    pageLayout: (markupId, viewModeId) => request<PageLayout>(`/markups/${id(markupId)}/page-screenshots/${id(viewModeId)}/layout`),
    viewModes: async (markupId) =>
      (await request<{ projectViewModes: ViewMode[] }>(`/markups/${id(markupId)}/view-modes`)).projectViewModes,
  };
}

/**
 * The pin fields of POST /threads: offsets on an image, PDF page or video; on a webpage the element
 * (its path on the screenshot, the offsets as percentages of its box), the page and the view mode,
 * with the screenshot's viewport as the browser context (spec "Create thread body").
 */
function pinBody(markupId: string, placement: Placement): Record<string, unknown> {
  const { element, ...offsets } = placement;
  if (!element) return { isImageThread: true, projectId: markupId, ...offsets };
  return {
    isImageThread: false,
    projectId: markupId,
    url: element.url,
    canonicalUrl: element.url,
    elements: [{ elementPath: element.path, offsetXPercentage: offsets.offsetXPercentage, offsetYPercentage: offsets.offsetYPercentage }],
    elementParents: [],
    offsetXPercentage: offsets.offsetXPercentage,
    offsetYPercentage: offsets.offsetYPercentage,
    browserContext: { viewportWidth: element.viewport.width, viewportHeight: element.viewport.height },
    viewModeId: element.viewModeId,
  };
}
