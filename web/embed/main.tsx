import { render } from 'preact';
import boardCss from '../board/board.css';
import { BoardStore, boardTransport, type BoardTransport, type Markup, type Request, type Thread, type ViewMode } from '../board/index.js';
import { followMarkup, LiveClient } from '../live/index.js';
import embedCss from './embed.css';
import { EmbedUi, type PagePlacement } from './overlay.js';
import { attachScreenshot } from './screenshot.js';
import { Session, type Identity } from './session.js';

/**
 * The embeddable commenting client (DESIGN.md "Embeddable client"): served as
 * `${appUrl}/embed/v1/review-board.js`, an ES module whose only export is `mount`. Its UI lives in
 * the open shadow root of one `<review-board-embed>` element, styled by constructable stylesheets
 * (no inline styles, no eval: a strict Content-Security-Policy needs only the app origin). It
 * defines no global name but that custom element.
 */
export interface MountOptions extends Identity {
  /** The installation's public key (GET /installations). */
  publicKey: string;
  /** Default: `${appUrl}/api/v2`, the app origin this module was loaded from. */
  apiUrl?: string;
  /** Default: the markup the exchange token is bound to. */
  markupId?: string;
}

export interface Mounted {
  unmount(): void;
  setCommentMode(on: boolean): void;
}

const TAG = 'review-board-embed';

class ReviewBoardEmbed extends HTMLElement {}

let sheet: CSSStyleSheet | undefined;
function styles(): CSSStyleSheet {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(`${boardCss}\n${embedCss}`);
  }
  return sheet;
}

/** The board's transport, but a new thread is a webpage thread on the clicked element, in the view mode of the viewport's width. */
function pageTransport(request: Request): BoardTransport {
  const base = boardTransport(request);
  let modes: Promise<ViewMode[]> | undefined;
  return {
    ...base,
    // End users cannot list a workspace's members (GET /markups/{id}/tag is closed to them): no mentions here.
    taggable: undefined,
    async createImageThread(markupId, placement, content, mentionIds = []) {
      const { page, offsetXPercentage, offsetYPercentage } = placement as PagePlacement;
      modes ??= base.viewModes(markupId).catch((failure: unknown) => {
        modes = undefined;
        throw failure;
      });
      const known = await modes;
      const mode = known.find((candidate) => candidate.category === page.viewCategory) ?? known[0];
      const { viewCategory: _category, screenshot, ...fields } = page;
      const thread = await request<Thread>('/threads', {
        method: 'POST',
        body: {
          isImageThread: false,
          projectId: markupId,
          ...fields,
          viewModeId: mode?.id,
          offsetXPercentage,
          offsetYPercentage,
          content,
          ...(mentionIds.length ? { mentionIds } : {}),
        },
      });
      // The viewport at the click goes with it where the browser could render it; the comment never waits for it or fails with it.
      void screenshot.then((shot) => shot && attachScreenshot(request, thread.id, shot)).catch(() => undefined);
      return thread;
    },
  };
}

export async function mount(options: MountOptions): Promise<Mounted> {
  if (!options || typeof options.publicKey !== 'string' || !options.publicKey)
    throw new TypeError("mount(): publicKey (the installation's public key) is required.");
  const apiUrl = (options.apiUrl ?? new URL('../../api/v2', import.meta.url).href).replace(/\/+$/, '');
  const session = new Session(
    apiUrl,
    options.publicKey,
    { getToken: options.getToken, sdk: options.sdk },
    options.markupId,
    location.origin,
  );
  let exchanged;
  try {
    exchanged = await session.exchange();
  } catch (failure) {
    session.stop();
    throw failure;
  }
  const markupId = options.markupId ?? exchanged.markupId;
  if (!markupId) {
    session.stop();
    throw new TypeError('mount(): give markupId, or a customer JWT bound to a markup (its markupId claim).');
  }
  if (!customElements.get(TAG)) customElements.define(TAG, ReviewBoardEmbed);
  const host = document.createElement(TAG);
  const root = host.attachShadow({ mode: 'open' });
  root.adoptedStyleSheets = [styles()];
  document.body.append(host);

  const store = new BoardStore(pageTransport(session.request), markupId);
  const markup: Markup = { id: markupId, name: document.title || 'This page', type: 'webpage', readOnly: false, url: location.href };
  // Others' comments arrive live (DESIGN.md "Live updates"), through the same exchange token.
  const live = new LiveClient(session.request);
  render(<EmbedUi store={store} host={host} markup={markup} live={live} />, root);
  let mounted = true;
  const unmount = () => {
    if (!mounted) return;
    mounted = false;
    live.close();
    session.stop();
    render(null, root);
    host.remove();
  };
  // The first read decides: a markup the token may not read (bound to another one) is the caller's error, not an empty page.
  await store.load();
  if (!store.get().loaded) {
    unmount();
    throw new Error(store.get().error ?? 'The comments could not be read.');
  }
  if (mounted) followMarkup(live, store);
  return {
    unmount,
    setCommentMode(on: boolean) {
      if (mounted) store.setAdding(Boolean(on));
    },
  };
}
