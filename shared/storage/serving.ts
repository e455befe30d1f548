import { baseMimeType, fileTypeOf } from './file-types.js';

/**
 * How the URLs the API hands out serve a stored file (DESIGN.md, "Files are served so they cannot
 * script"). Decided here only, from the file's recorded content type: raster images, PDF and video
 * are shown inline; everything else (HTML, SVG, XML, JavaScript, text, unknown types) downloads as
 * an attachment, so no uploaded file can run script in a browser that opens its URL.
 */
export interface Serving {
  disposition: 'inline' | 'attachment';
  /**
   * The `Content-Type` the URL answers with, whatever the object was stored with: the canonical
   * media type of a type we know (an SVG stays `image/svg+xml`, which an `<img>` still shows), else
   * `application/octet-stream`. Never a parameter: `charset=utf-7` and the like stay out.
   */
  contentType: string;
}

const ATTACHMENT_FALLBACK = 'application/octet-stream';

/**
 * The serving of a file of `contentType` (as recorded: any case, spaces, parameters). Judged by
 * its whole media type looked up in the known types, never by a prefix, and never by a file name:
 * `image/svg+xml`, `image/png, text/html` and `text/html` named `x.png` are attachments.
 */
export function servingOf(contentType: string): Serving {
  const media = baseMimeType(contentType);
  // An empty file name: the type alone decides (fileTypeOf would otherwise guess from an extension).
  const known = media === '' ? undefined : fileTypeOf(media, '');
  if (!known) return { disposition: 'attachment', contentType: ATTACHMENT_FALLBACK };
  const inline = (known.kind === 'image' && known.mimeType !== 'image/svg+xml') || known.kind === 'pdf' || known.kind === 'video';
  return { disposition: inline ? 'inline' : 'attachment', contentType: known.mimeType };
}

/**
 * The `Content-Disposition` of a URL: `inline` or `attachment`, with the name a download is saved
 * under when one is given (RFC 6266 `filename*`, so any name is safe in the header).
 */
export function contentDispositionOf(disposition: Serving['disposition'], filename?: string): string {
  if (!filename) return disposition;
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${disposition}; filename*=UTF-8''${encoded}`;
}
