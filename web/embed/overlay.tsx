import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  isUnread,
  NewCommentDialog,
  ThreadDialog,
  useBoardState,
  type BoardStore,
  type Markup,
  type Placement,
  type Thread,
} from '../board/index.js';
import { describeElement, locateAll, type Anchor } from '../anchoring/index.js';
import { captureViewport, type ViewportShot } from './screenshot.js';
import { LiveStatus, useLiveState, type LiveClient } from '../live/index.js';
import {
  browserContext,
  canonicalUrl,
  elementParents,
  offsetsWithin,
  pageUrl,
  viewCategoryOf,
  type BrowserContext,
  type ElementParent,
  type ViewCategory,
} from './page.js';

/** A webpage thread as the API answers it, with the fields the client places it by. */
export type PageThread = Thread & { canonicalUrl?: string; anchor?: Anchor | null; elements?: { path?: string }[] };

/** A pin placed on a page element, waiting for its first message: every webpage field but the view mode's id. */
export interface PagePlacement extends Placement {
  page: {
    url: string;
    canonicalUrl: string;
    elements: { elementPath: string; offsetXPercentage: number; offsetYPercentage: number }[];
    elementParents: ElementParent[];
    browserContext: BrowserContext;
    anchor: Anchor;
    viewCategory: ViewCategory;
    /** The viewport at the click, rendered in the browser; undefined where it cannot be. */
    screenshot: Promise<ViewportShot | undefined>;
  };
}

/**
 * The placement of a click at `(x, y)` on `element`: web/anchoring describes it (its element path and anchor); the viewport is rendered
 * without `host`.
 */
export function placementOf(element: Element, x: number, y: number, host: Element): PagePlacement {
  const offsets = offsetsWithin(element, x, y);
  const context = browserContext();
  const { elementPath, anchor } = describeElement(element);
  return {
    ...offsets,
    page: {
      url: pageUrl(),
      canonicalUrl: canonicalUrl(),
      elements: [{ elementPath, ...offsets }],
      elementParents: elementParents(element),
      browserContext: context,
      anchor,
      viewCategory: viewCategoryOf(context.viewportWidth),
      screenshot: captureViewport(host),
    },
  };
}

/** What a comment can be pinned on from the keyboard: the page's visible content, in document order, the client's own UI aside. */
const COMMENTABLE =
  'h1, h2, h3, h4, h5, h6, p, li, img, svg, video, canvas, figure, blockquote, pre, table, a, button, input, select, textarea, label';

function commentableElements(host: HTMLElement): Element[] {
  return [...document.body.querySelectorAll(COMMENTABLE)].filter((element) => {
    // Inside a drawing, the drawing is what is commented on.
    if (host.contains(element) || element.parentElement?.closest('svg')) return false;
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  });
}

/** How long DOM changes settle before pins are placed again. */
const MUTATION_DEBOUNCE_MS = 120;
/** How often the page's address is compared with the last one seen: a single-page app's pushState fires no event. */
const ADDRESS_CHECK_MS = 250;
/** How often the thread list is read again while the page is visible and live updates do not arrive (as the review app's board). */
const REFRESH_MS = 20_000;
/** While live, the list is still read again now and then: a deleted thread has no event. */
const LIVE_REFRESH_EVERY = 6;

/**
 * The client's UI in its shadow root (DESIGN.md "Embeddable client"): toggle button "Comment"; in
 * comment mode the element under the pointer is highlighted and a click on it opens dialog "New
 * comment"; pins "Comment N" on their elements; threads whose element is not found are listed under
 * "Unanchored comments". The dialogs are web/board's, driven by the same store.
 */
export function EmbedUi({ store, host, markup, live }: { store: BoardStore; host: HTMLElement; markup: Markup; live?: LiveClient }) {
  const state = useBoardState(store);
  const liveState = useLiveState(live);
  const isLive = useRef(false);
  isLive.current = liveState === 'live';
  const toggle = useRef<HTMLButtonElement>(null);
  const posted = useRef<string | undefined>(undefined);
  const [hover, setHover] = useState<DOMRect>();
  // Moves on DOM changes and navigation: elements are looked up again. `frame` moves on scroll and resize: pins follow.
  const [version, setVersion] = useState(0);
  const [, setFrame] = useState(0);

  useEffect(() => {
    let ticks = 0;
    const timer = setInterval(() => {
      ticks++;
      if (document.visibilityState === 'visible' && (!isLive.current || ticks % LIVE_REFRESH_EVERY === 0)) void store.load();
    }, REFRESH_MS);
    let debounce: ReturnType<typeof setTimeout> | undefined;
    const again = () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => setVersion((value) => value + 1), MUTATION_DEBOUNCE_MS);
    };
    const observer = new MutationObserver((records) => {
      if (records.some((record) => record.target !== host && !host.contains(record.target))) again();
    });
    observer.observe(document.documentElement, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: ['id', 'class', 'hidden', 'style'],
    });
    let frame = 0;
    const follow = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setFrame((value) => value + 1);
      });
    };
    let address = location.href;
    const navigation = setInterval(() => {
      if (location.href === address) return;
      address = location.href;
      again();
    }, ADDRESS_CHECK_MS);
    addEventListener('popstate', again);
    addEventListener('hashchange', again);
    addEventListener('scroll', follow, { capture: true, passive: true });
    addEventListener('resize', follow, { passive: true });
    return () => {
      clearInterval(timer);
      clearInterval(navigation);
      clearTimeout(debounce);
      cancelAnimationFrame(frame);
      observer.disconnect();
      removeEventListener('popstate', again);
      removeEventListener('hashchange', again);
      removeEventListener('scroll', follow, { capture: true });
      removeEventListener('resize', follow);
    };
  }, [store, host]);

  // Comment mode: highlight what the pointer is over, take the click (the page never sees it), Escape leaves.
  useLayoutEffect(() => {
    if (!state.adding) {
      setHover(undefined);
      return;
    }
    const own = (event: Event) => event.composedPath().includes(host);
    const targetOf = (event: Event) =>
      event.target instanceof Element && event.target !== document.documentElement ? event.target : undefined;
    const onMove = (event: MouseEvent) => setHover(own(event) ? undefined : targetOf(event)?.getBoundingClientRect());
    const swallow = (event: Event) => {
      if (own(event)) return;
      event.preventDefault();
      event.stopPropagation();
      event.stopImmediatePropagation();
    };
    const onClick = (event: MouseEvent) => {
      if (own(event)) return;
      swallow(event);
      const element = targetOf(event);
      if (!element) return;
      setHover(undefined);
      store.place(placementOf(element, event.clientX, event.clientY, host));
    };
    // From the keyboard: the arrow keys walk the page's elements (any, not only those that take the focus), Enter pins the one chosen,
    // or a focused page element, at its centre.
    let chosen: Element | undefined;
    const choose = (step: 1 | -1) => {
      const candidates = commentableElements(host);
      if (candidates.length === 0) return;
      const at = chosen ? candidates.indexOf(chosen) : -1;
      chosen = candidates[at === -1 ? (step === 1 ? 0 : candidates.length - 1) : (at + step + candidates.length) % candidates.length];
      chosen!.scrollIntoView({ block: 'nearest' });
      setHover(chosen!.getBoundingClientRect());
    };
    const pin = (element: Element) => {
      const box = element.getBoundingClientRect();
      setHover(undefined);
      store.place(placementOf(element, box.left + box.width / 2, box.top + box.height / 2, host));
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        store.setAdding(false);
        toggle.current?.focus();
        return;
      }
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        swallow(event);
        choose(event.key === 'ArrowDown' ? 1 : -1);
        return;
      }
      if (event.key !== 'Enter') return;
      if (chosen?.isConnected) {
        swallow(event);
        pin(chosen);
        return;
      }
      const element = targetOf(event);
      if (own(event) || !element || element === document.body) return;
      swallow(event);
      pin(element);
    };
    const onFocus = (event: FocusEvent) => {
      if (own(event)) return;
      chosen = undefined;
      setHover(targetOf(event)?.getBoundingClientRect());
    };
    addEventListener('mousemove', onMove, true);
    addEventListener('mousedown', swallow, true);
    addEventListener('mouseup', swallow, true);
    addEventListener('click', onClick, true);
    addEventListener('keydown', onKey, true);
    addEventListener('focusin', onFocus, true);
    return () => {
      removeEventListener('focusin', onFocus, true);
      removeEventListener('mousemove', onMove, true);
      removeEventListener('mousedown', swallow, true);
      removeEventListener('mouseup', swallow, true);
      removeEventListener('click', onClick, true);
      removeEventListener('keydown', onKey, true);
    };
  }, [state.adding, store, host]);

  const canonical = useMemo(() => canonicalUrl(), [version]);
  const onPage = (state.threads as PageThread[]).filter((thread) => thread.canonicalUrl === canonical);
  // Looked up again when the threads or the page change (one web/anchoring pass, one page text), not on every scroll.
  const located = useMemo(() => {
    const found = onPage.length
      ? locateAll(
          document,
          onPage.map((thread) => ({ elementPath: thread.elements?.[0]?.path, anchor: thread.anchor })),
        )
      : [];
    return new Map(onPage.map((thread, index) => [thread.id, found[index]]));
  }, [state.threads, version, canonical]);
  const unanchored = onPage.filter((thread) => !located.get(thread.id)?.element.isConnected);
  const openThread = state.threads.find((thread) => thread.id === state.openThreadId);

  return (
    <div class="embed-root">
      <div class="embed-pins">
        {onPage.map((thread) => {
          const element = located.get(thread.id)?.element;
          if (!element?.isConnected) return null;
          const box = element.getBoundingClientRect();
          if (box.width === 0 && box.height === 0) return null;
          const first = thread.elements?.[0] as { offsetXPercentage?: number; offsetYPercentage?: number } | undefined;
          const x = box.left + (box.width * (first?.offsetXPercentage ?? 50)) / 100;
          const y = box.top + (box.height * (first?.offsetYPercentage ?? 50)) / 100;
          return (
            <button
              key={thread.id}
              type="button"
              data-pin={thread.id}
              class={`pin${thread.resolved ? ' resolved' : ''}${isUnread(thread) ? ' unread' : ''}`}
              aria-label={`Comment ${thread.number}`}
              title={isUnread(thread) ? 'Unread' : undefined}
              style={{ left: `${Math.round(x)}px`, top: `${Math.round(y)}px` }}
              onClick={() => store.open(thread.id)}
            >
              {thread.number}
            </button>
          );
        })}
      </div>
      {hover ? (
        <div
          class="embed-highlight"
          style={{ left: `${hover.left}px`, top: `${hover.top}px`, width: `${hover.width}px`, height: `${hover.height}px` }}
        />
      ) : null}
      <div class="embed-dock">
        {unanchored.length ? (
          <section class="embed-panel" aria-labelledby="embed-unanchored">
            <h2 id="embed-unanchored">Unanchored comments</h2>
            <ol>
              {unanchored.map((thread) => (
                <li key={thread.id}>
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Open comment #${thread.number}`}
                    onClick={() => store.open(thread.id)}
                  >
                    #{thread.number}
                  </button>
                  <span class="thread-text">{thread.messages[0]?.content ?? ''}</span>
                </li>
              ))}
            </ol>
          </section>
        ) : null}
        {state.error && !state.draft && !openThread ? (
          <p class="embed-panel embed-error" role="alert">
            {state.error}
          </p>
        ) : null}
        <div class="embed-toolbar">
          {live ? <LiveStatus live={live} class="embed-hint" /> : null}
          {state.adding ? (
            <p class="embed-hint" role="status">
              Click the element to comment on, or choose it with the arrow keys and press Enter. Escape cancels.
            </p>
          ) : null}
          <button ref={toggle} type="button" aria-pressed={state.adding} onClick={() => store.setAdding(!state.adding)}>
            Comment
          </button>
        </div>
      </div>
      {state.draft ? (
        <NewCommentDialog
          store={store}
          onPosted={(thread) => (posted.current = thread.id)}
          // The new comment's pin takes the focus, as in the review app; the toggle where it has none (another page, unanchored).
          returnFocus={() => host.shadowRoot?.querySelector<HTMLElement>(`[data-pin="${posted.current}"]`) ?? toggle.current}
        />
      ) : null}
      {openThread ? <ThreadDialog thread={openThread} markup={markup} store={store} fallbackFocus={() => toggle.current} /> : null}
    </div>
  );
}
