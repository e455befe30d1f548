/**
 * The shapes the board reads (spec "Resources": Markup, Thread, Message; docs/api-markups.md), only
 * the fields it uses. Shared by the review app and the embeddable client.
 */
export interface Author {
  id: string;
  name: string;
  guest?: boolean;
}

/** A workspace member who can be mentioned. */
export interface Member {
  id: string;
  name: string;
  email?: string | null;
}

export interface Message {
  id: string;
  createdAt: number;
  modifiedAt: number;
  content: string;
  user: Author;
  scopes: string[];
  read?: boolean;
  mentionIds?: string[];
  attachments?: { id: string; url: string; mimeType: string; originalFilename: string; filesize: number }[];
}

export interface ThreadElement {
  path?: string;
  offsetXPercentage?: number;
  offsetYPercentage?: number;
}

export interface Thread {
  id: string;
  number: number;
  resolved: boolean;
  createdAt: number;
  lastActivityAt?: number;
  user: Author;
  scopes: string[];
  messages: Message[];
  read?: boolean;
  unreadMessageCount?: number;
  projectImageId?: string | null;
  offsetXPercentage?: number;
  offsetYPercentage?: number;
  pageNumber?: number | null;
  startTime?: number;
  endTime?: number;
  viewModeId?: string | null;
  elements?: ThreadElement[];
}

export interface MarkupImage {
  id: string;
  url: string;
  width?: number;
  height?: number;
}

export interface MarkupPage {
  number: number;
  width: number;
  height: number;
  image?: { url: string };
}

export interface MarkupVideo {
  url: string;
  mimeType?: string;
  durationSeconds?: number;
  width?: number;
  height?: number;
  posterUrl?: string;
}

export type MarkupType = 'image' | 'pdf' | 'video' | 'webpage';

/** A webpage markup's full-page screenshot at one view mode (`pageScreenshots` of the markup read). */
export interface PageScreenshot {
  viewModeId: string;
  state: 'pending' | 'ready' | 'unavailable';
  url?: string;
  width?: number;
  height?: number;
  layoutUrl?: string;
  error?: string;
}

export interface PageBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Where a page screenshot's elements are, in its CSS pixels (GET /markups/{id}/page-screenshots/{viewModeId}/layout). */
export interface PageLayout {
  width: number;
  height: number;
  elements: (PageBox & { path: string })[];
  located: Record<string, PageBox | null>;
}

export interface Markup {
  id: string;
  name: string;
  type: MarkupType;
  readOnly: boolean;
  isReady?: boolean;
  scopes?: string[];
  url?: string;
  thumbnailUrl?: string;
  conversionStatus?: 'pending' | 'ready' | 'failed';
  conversionError?: string | { detail?: string; message?: string };
  /** While `conversionStatus` is `pending`: how far it has come (an extension of GET /markups/{id}). */
  conversionProgress?: { percent?: number; pagesConverted?: number; pageCount?: number };
  images?: MarkupImage[];
  document?: { pageCount: number; pages: MarkupPage[] };
  video?: MarkupVideo;
  pageScreenshots?: PageScreenshot[];
}

export interface ViewMode {
  id: string;
  category: string;
  name: string;
  width: number;
  height: number;
}

/** Where a new comment is placed: percentages over one surface, and what that surface is. */
export interface Placement {
  offsetXPercentage: number;
  offsetYPercentage: number;
  projectImageId?: string;
  pageNumber?: number;
  startTime?: number;
  endTime?: number;
  /** Webpage markups: the element the pin is on (offsets are percentages of its box), the page and the view mode. */
  element?: { path: string; url: string; viewModeId: string; viewport: { width: number; height: number } };
}
