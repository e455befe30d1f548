import { domToBlob } from 'modern-screenshot';
import type { Request } from '../board/index.js';
import { postForm } from '../board/upload.js';

/**
 * The screenshot a new comment carries (issue 31 item 2): the viewport as the user saw it when they
 * clicked, rendered in the browser by modern-screenshot, then attached through the spec's screenshot
 * flow (GET screenshot-upload-policy, the form POST to storage, PUT screenshot). Nothing else leaves
 * the page: the renderer fetches nothing (images and CSS backgrounds with a URL are drawn as a
 * blank placeholder, web fonts are not embedded) and the client's own element is left out. Where the
 * browser cannot render it (a Content-Security-Policy without `img-src data:`, a canvas refused,
 * a very large page), the comment goes without one.
 */
export interface ViewportShot {
  blob: Blob;
  width: number;
  height: number;
}

/** A transparent 1x1 GIF: what an image with a URL becomes (fetching it would send a request). */
const BLANK = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
/** Past this the render is abandoned (the comment does not wait longer for it). */
const TIMEOUT_MS = 5_000;

/** The smallest SVG document: the renderer draws the page through an image like it. */
const PROBE = 'data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%20width%3D%221%22%20height%3D%221%22%2F%3E';

/**
 * Whether the page lets a `data:` SVG image load. The renderer draws the page through one; a CSP
 * that refuses it (no `img-src data:`) leaves the canvas as blank as its background, which would
 * be attached as if it were the page.
 */
function dataImagesLoad(): Promise<boolean> {
  return new Promise((resolve) => {
    const image = new Image();
    const timer = setTimeout(() => resolve(false), TIMEOUT_MS);
    image.onload = () => {
      clearTimeout(timer);
      resolve(true);
    };
    image.onerror = () => {
      clearTimeout(timer);
      resolve(false);
    };
    image.src = PROBE;
  });
}

/** The viewport now, without `host` (the client's element); undefined where the browser cannot render it. */
export async function captureViewport(host: Element): Promise<ViewportShot | undefined> {
  if (!(await dataImagesLoad())) return undefined;
  const root = document.documentElement;
  const width = root.clientWidth || innerWidth;
  const height = root.clientHeight || innerHeight;
  try {
    const blob = await domToBlob(root, {
      width,
      height,
      // The page moved up and left by its scroll, so the box shows what the viewport shows.
      style: { transform: `translate(${-scrollX}px, ${-scrollY}px)`, transformOrigin: '0 0' },
      backgroundColor: canvasColour(),
      filter: (node) => node !== host,
      font: false,
      fetchFn: async (url) => (url.startsWith('data:') ? false : BLANK),
      fetch: { placeholderImage: BLANK },
      timeout: TIMEOUT_MS,
      type: 'image/png',
    });
    return blob && blob.size > 0 ? { blob, width, height } : undefined;
  } catch {
    return undefined;
  }
}

/** The canvas's colour as the browser paints it: the root's background, else the body's (CSS propagates it), else white. */
function canvasColour(): string {
  const transparent = (colour: string) => colour === 'transparent' || /^rgba\(.*,\s*0\)$/.test(colour);
  const colours = [document.documentElement, document.body].map((element) =>
    element ? getComputedStyle(element).backgroundColor : 'transparent',
  );
  return colours.find((colour) => !transparent(colour)) ?? '#ffffff';
}

/** Attaches `shot` to the thread through the screenshot flow (spec, Threads: "Screenshot flow"). */
export async function attachScreenshot(request: Request, threadId: string, shot: ViewportShot): Promise<void> {
  const mimeType = 'image/png';
  const query = new URLSearchParams({ filename: 'viewport.png', mimeType, filesize: String(shot.blob.size) });
  const thread = encodeURIComponent(threadId);
  const { key, policy, metadata } = await request<{
    key: string;
    policy: { url: string; fields: Record<string, string> };
    metadata: { fileId: string };
  }>(`/threads/${thread}/screenshot-upload-policy?${query}`);
  const form = new FormData();
  for (const [name, value] of Object.entries(policy.fields)) form.append(name, value);
  form.append('file', shot.blob, 'viewport.png');
  const etag = await postForm(policy.url, form, () => undefined);
  // The board's Request type names the methods the board uses; the client's session sends any (PUT here).
  const put = request as unknown as (path: string, options: { method: 'PUT'; body: unknown }) => Promise<unknown>;
  await put(`/threads/${thread}/screenshot`, {
    method: 'PUT',
    body: {
      fileId: metadata.fileId,
      key,
      etag,
      mimeType,
      width: shot.width,
      height: shot.height,
      filesize: shot.blob.size,
      originalFilename: 'viewport.png',
    },
  });
}
