/**
 * What the service makes of a file, judged by its content type and, when that says nothing we
 * know, by its extension (Markups rules 3 and 4).
 */

/** `image` is displayable as uploaded; the other kinds are converted before they can be shown. */
export type FileKind = 'image' | 'pdf' | 'video' | 'convertible-image';

export interface FileType {
  kind: FileKind;
  /** The canonical mime type of the kind (what the markup reports). */
  mimeType: string;
}

const type = (kind: FileKind, mimeType: string): FileType => ({ kind, mimeType });

/** Content types we recognise, with their common aliases. */
const BY_MIME_TYPE: Record<string, FileType> = {
  'image/png': type('image', 'image/png'),
  'image/apng': type('image', 'image/apng'),
  'image/jpeg': type('image', 'image/jpeg'),
  'image/jpg': type('image', 'image/jpeg'),
  'image/pjpeg': type('image', 'image/jpeg'),
  'image/gif': type('image', 'image/gif'),
  'image/bmp': type('image', 'image/bmp'),
  'image/x-bmp': type('image', 'image/bmp'),
  'image/x-ms-bmp': type('image', 'image/bmp'),
  'image/webp': type('image', 'image/webp'),
  'image/svg+xml': type('image', 'image/svg+xml'),
  'application/pdf': type('pdf', 'application/pdf'),
  'application/x-pdf': type('pdf', 'application/pdf'),
  'video/mp4': type('video', 'video/mp4'),
  'video/quicktime': type('video', 'video/quicktime'),
  'video/webm': type('video', 'video/webm'),
  'video/x-msvideo': type('video', 'video/x-msvideo'),
  'video/avi': type('video', 'video/x-msvideo'),
  'video/msvideo': type('video', 'video/x-msvideo'),
  'video/x-ms-wmv': type('video', 'video/x-ms-wmv'),
  'video/x-matroska': type('video', 'video/x-matroska'),
  'video/mxf': type('video', 'application/mxf'),
  'application/mxf': type('video', 'application/mxf'),
  'image/tiff': type('convertible-image', 'image/tiff'),
  'image/tiff-fx': type('convertible-image', 'image/tiff'),
  'image/vnd.adobe.photoshop': type('convertible-image', 'image/vnd.adobe.photoshop'),
  'image/x-photoshop': type('convertible-image', 'image/vnd.adobe.photoshop'),
  'image/psd': type('convertible-image', 'image/vnd.adobe.photoshop'),
  'application/x-photoshop': type('convertible-image', 'image/vnd.adobe.photoshop'),
  'application/photoshop': type('convertible-image', 'image/vnd.adobe.photoshop'),
  'application/psd': type('convertible-image', 'image/vnd.adobe.photoshop'),
  'application/postscript': type('convertible-image', 'application/postscript'),
  'application/eps': type('convertible-image', 'application/postscript'),
  'application/x-eps': type('convertible-image', 'application/postscript'),
  'image/eps': type('convertible-image', 'application/postscript'),
  'image/x-eps': type('convertible-image', 'application/postscript'),
};

const BY_EXTENSION: Record<string, FileType> = {
  png: type('image', 'image/png'),
  apng: type('image', 'image/apng'),
  jpg: type('image', 'image/jpeg'),
  jpeg: type('image', 'image/jpeg'),
  jpe: type('image', 'image/jpeg'),
  gif: type('image', 'image/gif'),
  bmp: type('image', 'image/bmp'),
  webp: type('image', 'image/webp'),
  svg: type('image', 'image/svg+xml'),
  pdf: type('pdf', 'application/pdf'),
  mp4: type('video', 'video/mp4'),
  m4v: type('video', 'video/mp4'),
  mov: type('video', 'video/quicktime'),
  webm: type('video', 'video/webm'),
  avi: type('video', 'video/x-msvideo'),
  wmv: type('video', 'video/x-ms-wmv'),
  mkv: type('video', 'video/x-matroska'),
  mxf: type('video', 'application/mxf'),
  tif: type('convertible-image', 'image/tiff'),
  tiff: type('convertible-image', 'image/tiff'),
  psd: type('convertible-image', 'image/vnd.adobe.photoshop'),
  eps: type('convertible-image', 'application/postscript'),
};

/** `Image/PNG; charset=x` -> `image/png`. */
export function baseMimeType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

export function extensionOf(filename: string): string | undefined {
  return /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
}

/**
 * The file type of an upload: by its content type, or by the extension of its name when the
 * content type is one we do not know (`application/octet-stream`, an empty one, a vendor type).
 * Undefined for files no markup can be made from.
 */
export function fileTypeOf(contentType: string, filename: string): FileType | undefined {
  const mime = baseMimeType(contentType);
  // Own entries only: `constructor` or `toString` name no type.
  if (Object.hasOwn(BY_MIME_TYPE, mime)) return BY_MIME_TYPE[mime];
  const extension = extensionOf(filename);
  return extension !== undefined && Object.hasOwn(BY_EXTENSION, extension) ? BY_EXTENSION[extension] : undefined;
}

/** Types that say nothing of a file (what a browser sends when it does not know): its name decides. */
const GENERIC_MIME_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/**
 * A file shown as uploaded (PNG, JPEG, GIF, BMP, WebP, SVG): avatars, icons, screenshots, image
 * pages. Its name decides only when its type says nothing or is some other image type: `text/html`
 * stays refused under a `.png` name.
 */
export function isDisplayableImage(contentType: string, filename: string): boolean {
  const mime = baseMimeType(contentType);
  if (!Object.hasOwn(BY_MIME_TYPE, mime) && !GENERIC_MIME_TYPES.has(mime) && !mime.startsWith('image/')) return false;
  return fileTypeOf(contentType, filename)?.kind === 'image';
}

/** The extensions markups are made from, for messages. */
export const SUPPORTED_EXTENSIONS = Object.keys(BY_EXTENSION);
