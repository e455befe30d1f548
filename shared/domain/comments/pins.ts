import { randomUUID } from 'node:crypto';
import type { MarkupRecord } from '../../db/items.js';
import type { ThreadAnchor, ThreadElementRecord, ThreadKind, ThreadParentRecord, ThreadRecord } from '../../db/threads.js';
import { ConflictError, InvalidInputError } from '../../errors.js';
import { isHttpUrl } from '../../schemas/builders.js';
import type { BrowserContextInput, TextHighlightInput } from '../../schemas/threads.js';
import { VIEW_MODES } from '../markups/view-modes.js';
import { withArticle } from '../../english.js';

/**
 * Where a thread is pinned: page elements (and their parents) on a webpage markup, offsets on an
 * image, a PDF page or a video time on the others. Creation places a pin, move-pin replaces it.
 */

export interface ElementInput {
  elementPath: string;
  offsetXPercentage: number;
  offsetYPercentage: number;
}

export interface ElementParentInput {
  url: string;
  canonicalUrl: string;
  path: string;
  depth: number;
}

/** The pin fields of POST /threads; the webpage fields are required on a webpage markup only. */
export interface PinInput {
  isImageThread: boolean;
  projectImageId?: string;
  url?: string;
  canonicalUrl?: string;
  elements?: ElementInput[];
  offsetXPercentage: number;
  offsetYPercentage: number;
  startTime?: number;
  endTime?: number;
  browserContext?: BrowserContextInput;
  elementParents?: ElementParentInput[];
  viewModeId?: string;
  /** Extension (webpage threads): the embeddable client's selectors of the element. */
  anchor?: ThreadAnchor;
  textHighlight?: TextHighlightInput;
  pageNumber?: number;
}

/** The fields only a webpage pin has, in the order the spec lists them. */
const WEBPAGE_FIELDS = ['url', 'canonicalUrl', 'elements', 'browserContext', 'elementParents', 'viewModeId'] as const;

type WebpagePin = PinInput & Required<Pick<PinInput, (typeof WEBPAGE_FIELDS)[number]>>;

/** A webpage pin names every webpage field; one problem per missing field, all at once. */
function requireWebpageFields(input: PinInput): asserts input is WebpagePin {
  const missing = WEBPAGE_FIELDS.filter((field) => input[field] === undefined);
  if (missing.length > 0) throw new InvalidInputError(missing.map((field) => ({ field, detail: 'is required on a webpage markup' })));
}

/** A thread request's `field` (as the operation's input names it, `elementParents/0/url`) breaks a rule. */
export const invalid = (field: string, detail: string) => new InvalidInputError([{ field, detail }]);

/** New element records for a pin, each with its own id, made at `at`. */
export function elementsOf(elements: readonly ElementInput[], at: number): ThreadElementRecord[] {
  return elements.map((element) => ({
    id: randomUUID(),
    createdAt: at,
    modifiedAt: at,
    path: element.elementPath,
    offsetXPercentage: element.offsetXPercentage,
    offsetYPercentage: element.offsetYPercentage,
  }));
}

/** New parent records for a webpage pin; every parent's `url` must be an http(s) address. */
export function parentsOf(parents: readonly ElementParentInput[], at: number): ThreadParentRecord[] {
  return parents.map((parent, index) => {
    if (!isHttpUrl(parent.url)) throw invalid(`elementParents/${index}/url`, 'must be an absolute http or https URL');
    return {
      id: randomUUID(),
      createdAt: at,
      modifiedAt: at,
      path: parent.path,
      depth: parent.depth,
      url: parent.url,
      canonicalUrl: parent.canonicalUrl,
    };
  });
}

function requireTimes(markup: MarkupRecord, startTime: number | undefined, endTime: number | undefined): void {
  if (endTime !== undefined && startTime === undefined) throw invalid('endTime', 'needs a startTime');
  if (startTime !== undefined && endTime !== undefined && endTime < startTime) throw invalid('endTime', 'must not be before startTime');
  const duration = markup.video?.durationSeconds;
  if (duration !== undefined && startTime !== undefined && startTime > duration)
    throw invalid('startTime', `must be within the video (${duration} seconds)`);
  if (duration !== undefined && endTime !== undefined && endTime > duration)
    throw invalid('endTime', `must be within the video (${duration} seconds)`);
}

/**
 * The pin of a new thread, by the markup's type (Resources: Thread). Webpage markups take webpage
 * threads (`isImageThread: false`): the page address, the elements and their parents, the browser
 * context and one of the markup's view modes, all required. Image, PDF and video markups take image
 * threads (`isImageThread: true`) placed by percentage offsets: on one of the images
 * (`projectImageId`, default the first), on a PDF page (`pageNumber`, required), or at a video time
 * (`startTime`); they need none of the webpage fields (DESIGN.md), which the request validation
 * cannot tell before the markup is loaded.
 */
export function pinOf(markup: MarkupRecord, input: PinInput, at: number): Partial<ThreadRecord> & { kind: ThreadKind } {
  if (markup.type === 'webpage') {
    if (input.isImageThread) throw invalid('isImageThread', 'must be false on a webpage markup (its threads are pinned to page elements)');
    requireWebpageFields(input);
    if (!isHttpUrl(input.url)) throw invalid('url', 'must be the absolute http or https address of the page the pin is on');
    if (!VIEW_MODES.some((mode) => mode.id === input.viewModeId)) {
      throw invalid(
        'viewModeId',
        `must be one of the markup's view modes (GET /markups/${markup.id}/view-modes): ${VIEW_MODES.map((mode) => mode.id).join(', ')}`,
      );
    }
    return {
      kind: 'webpage',
      url: input.url,
      canonicalUrl: input.canonicalUrl,
      elements: elementsOf(input.elements, at),
      parents: parentsOf(input.elementParents, at),
      browserContext: input.browserContext,
      viewModeId: input.viewModeId,
      ...(input.anchor ? { anchor: input.anchor } : {}),
      offsetXPercentage: input.offsetXPercentage,
      offsetYPercentage: input.offsetYPercentage,
    };
  }
  if (!input.isImageThread)
    throw invalid('isImageThread', `must be true on ${withArticle(markup.type)} markup (its threads are pinned by offsets)`);
  if (!markup.isReady) throw new ConflictError(`Markup ${markup.id} is still being converted; pin threads once it is ready (isReady).`);
  // The other webpage fields mean nothing here and are not kept; the browser context is, when sent.
  const common = {
    offsetXPercentage: input.offsetXPercentage,
    offsetYPercentage: input.offsetYPercentage,
    browserContext: input.browserContext,
  };
  switch (markup.type) {
    case 'image': {
      const images = markup.images ?? [];
      if (input.projectImageId !== undefined && !images.some((image) => image.id === input.projectImageId)) {
        throw invalid('projectImageId', `is not an image of markup ${markup.id}`);
      }
      requireTimes(markup, input.startTime, input.endTime);
      return {
        kind: 'image',
        ...common,
        projectImageId: input.projectImageId ?? images[0]?.id ?? null,
        startTime: input.startTime ?? null,
        endTime: input.endTime ?? null,
      };
    }
    case 'pdf': {
      if (input.pageNumber === undefined) throw invalid('pageNumber', 'is required on a PDF markup');
      const pageCount = markup.document?.pageCount;
      if (pageCount !== undefined && input.pageNumber > pageCount)
        throw invalid('pageNumber', `must be between 1 and ${pageCount}, the pages of this PDF`);
      return { kind: 'pdf', ...common, projectImageId: null, pageNumber: input.pageNumber, textHighlight: input.textHighlight ?? null };
    }
    case 'video':
      requireTimes(markup, input.startTime, input.endTime);
      return { kind: 'video', ...common, projectImageId: null, startTime: input.startTime ?? null, endTime: input.endTime ?? null };
  }
}
