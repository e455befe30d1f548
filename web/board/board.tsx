import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { AttachmentList, AttachmentPicker, uploadedIds, uploading, type PendingAttachment } from './attachments.js';
import { Dialog } from './dialog.js';
import {
  elementAt,
  formatTime,
  isUnread,
  orderThreads,
  pagePinOf,
  pageRefusalOf,
  percentOf,
  refusalOf,
  roleCannotComment,
  showsAt,
  unlocatedPaths,
  videoRange,
  visibleThreads,
} from './pins.js';
import type { BoardState, BoardStore, ThreadFilter, ThreadOrder } from './store.js';
import type { Markup, MarkupPage, PageLayout, Placement, Thread, ViewMode } from './types.js';
import { useBoardState } from './use-board.js';
import type { LiveClient } from '../live/client.js';
import { LiveStatus, useLiveState } from '../live/status.js';

/**
 * The pin-and-thread board (DESIGN.md "The review app", roles and names are a public contract):
 * each image, PDF page, video or page screenshot is an `img` (or a `video`) named after the markup;
 * button "Add comment", then a click on the board opens dialog "New comment" (textbox "Comment",
 * button "Post"); pins are buttons "Comment N"; a thread is dialog "Comment N" with textbox "Reply",
 * buttons "Send" and "Resolve" or "Reopen". Pins and the thread list render the same store.
 */
export interface BoardProps {
  markup: Markup;
  store: BoardStore;
  /** Webpage markups: the view modes to show as tabs. */
  viewModes?: ViewMode[];
  /** Live updates of the markup (web/live): the board says when they are not arriving. */
  live?: LiveClient;
}

/** How often the thread list is read again while the page is visible and live updates are not arriving. */
const REFRESH_MS = 20_000;
/** While live, the list is still read again now and then: a deleted thread has no event. */
const LIVE_REFRESH_EVERY = 6;

export function Board({ markup, store, viewModes, live }: BoardProps) {
  const state = useBoardState(store);
  const liveState = useLiveState(live);
  const isLive = useRef(false);
  isLive.current = liveState === 'live';
  const addButton = useRef<HTMLButtonElement>(null);
  const focusAfterDraft = useRef<string | undefined>(undefined);
  const refusal = refusalOf(markup) ?? pageRefusalOf(markup);
  const [currentTime, setCurrentTime] = useState(0);
  const videoRef = useRef<HTMLVideoElement>(null);

  // Others' comments arrive live (web/live); while they do not, by reading the list again while the tab is seen.
  useEffect(() => {
    void store.load();
    let ticks = 0;
    const timer = setInterval(() => {
      ticks++;
      if (document.visibilityState === 'visible' && (!isLive.current || ticks % LIVE_REFRESH_EVERY === 0)) void store.load();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [store]);

  // Escape leaves "Add comment" mode (dialogs handle their own Escape); listening from the commit on.
  useLayoutEffect(() => {
    if (!state.adding) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        store.setAdding(false);
        addButton.current?.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [state.adding, store]);

  const shown = visibleThreads(state);
  const openThread = state.threads.find((thread) => thread.id === state.openThreadId);
  const place = (placement: Placement) => {
    if (markup.type === 'video') {
      const video = videoRef.current;
      video?.pause();
      const current = video?.currentTime ?? 0;
      const duration = video && Number.isFinite(video.duration) ? video.duration : (markup.video?.durationSeconds ?? current);
      placement = { ...placement, ...videoRange(current, duration) };
    }
    store.place(placement);
  };
  const openFromList = (thread: Thread) => {
    if (markup.type === 'video' && videoRef.current && thread.startTime !== undefined) {
      videoRef.current.pause();
      videoRef.current.currentTime = thread.startTime;
      setCurrentTime(thread.startTime);
    }
    store.open(thread.id);
  };

  return (
    <div class="board">
      <div class="board-toolbar">
        {roleCannotComment(markup) ? null : (
          <button
            ref={addButton}
            type="button"
            aria-pressed={state.adding}
            disabled={refusal !== undefined}
            aria-describedby={refusal ? 'board-refusal' : undefined}
            onClick={(event) => {
              store.setAdding(!state.adding);
              // From the keyboard (no pointer), the first surface takes the focus: Enter places the pin there.
              if (!state.adding && event.detail === 0)
                setTimeout(() => document.querySelector<HTMLElement>('.surface.adding img, .surface.adding video')?.focus(), 0);
            }}
          >
            Add comment
          </button>
        )}
        {state.adding ? (
          <p class="board-hint" role="status">
            Click or tap the{' '}
            {markup.type === 'video'
              ? 'video at the moment'
              : markup.type === 'pdf'
                ? 'page'
                : markup.type === 'webpage'
                  ? 'screenshot on the element'
                  : 'image'}{' '}
            where the comment belongs (or focus it and press Enter). Escape cancels.
          </p>
        ) : null}
        {refusal ? (
          <p id="board-refusal" class="board-note">
            {refusal}
          </p>
        ) : null}
        {live ? <LiveStatus live={live} class="board-note" /> : null}
      </div>
      {state.error ? (
        <div class="message message-error board-error" role="alert">
          <span>{state.error}</span>{' '}
          <button type="button" class="secondary" onClick={() => store.dismissError()}>
            Dismiss
          </button>
        </div>
      ) : null}
      <div class="board-layout">
        <div class="board-surfaces">
          <Surfaces
            markup={markup}
            store={store}
            state={state}
            threads={shown}
            viewModes={viewModes}
            onPlace={place}
            onOpen={(thread) => store.open(thread.id)}
            videoRef={videoRef}
            currentTime={currentTime}
            onTime={setCurrentTime}
          />
        </div>
        <ThreadList
          markup={markup}
          state={state}
          threads={shown}
          viewModes={viewModes}
          onFilter={(filter) => store.setFilter(filter)}
          onOrder={(order) => store.setOrder(order)}
          onOpen={openFromList}
        />
      </div>
      {state.draft ? (
        <NewCommentDialog
          store={store}
          onPosted={(thread) => (focusAfterDraft.current = thread.id)}
          returnFocus={() => {
            const id = focusAfterDraft.current;
            focusAfterDraft.current = undefined;
            return (id ? document.querySelector<HTMLElement>(`[data-pin="${id}"]`) : null) ?? addButton.current;
          }}
        />
      ) : null}
      {openThread ? (
        <ThreadDialog thread={openThread} markup={markup} store={store} viewModes={viewModes} fallbackFocus={() => addButton.current} />
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Surfaces: what the markup shows, with its pins
// ---------------------------------------------------------------------------------------------

interface SurfacesProps {
  markup: Markup;
  store: BoardStore;
  state: BoardState;
  threads: Thread[];
  viewModes?: ViewMode[];
  onPlace: (placement: Placement) => void;
  onOpen: (thread: Thread) => void;
  videoRef: { current: HTMLVideoElement | null };
  currentTime: number;
  onTime: (seconds: number) => void;
}

function Surfaces(props: SurfacesProps) {
  const { markup, state, threads, onPlace, onOpen } = props;
  switch (markup.type) {
    case 'image': {
      const images = markup.images ?? [];
      if (images.length === 0) return <p class="board-note">This markup has no images yet.</p>;
      const firstId = images[0]!.id;
      return (
        <>
          {images.map((image, index) => (
            <PinSurface
              key={image.id}
              label={images.length > 1 ? `${markup.name}, image ${index + 1} of ${images.length}` : markup.name}
              src={image.url}
              width={image.width}
              height={image.height}
              adding={state.adding}
              pins={threads.filter((thread) => (thread.projectImageId ?? firstId) === image.id)}
              onPlace={(x, y) => onPlace({ offsetXPercentage: x, offsetYPercentage: y, projectImageId: image.id })}
              onOpen={onOpen}
            />
          ))}
        </>
      );
    }
    case 'pdf': {
      const pages = markup.document?.pages ?? [];
      if (pages.length === 0) return <p class="board-note">This PDF has no pages to show.</p>;
      return (
        <>
          {pages.map((page) => (
            <PdfPage key={page.number} page={page} count={pages.length} {...props} />
          ))}
        </>
      );
    }
    case 'video':
      return <VideoSurface {...props} />;
    case 'webpage':
      return <WebpageSurface {...props} />;
  }
}

function PdfPage({ page, count, markup, state, threads, onPlace, onOpen }: SurfacesProps & { page: MarkupPage; count: number }) {
  const label = `${markup.name}, page ${page.number} of ${count}`;
  const pins = threads.filter((thread) => (thread.pageNumber ?? 1) === page.number);
  if (!page.image) {
    return (
      <p class="board-note">
        Page {page.number} is not rendered yet{pins.length ? `; its ${pins.length} comment(s) are in the list` : ''}.
      </p>
    );
  }
  return (
    <PinSurface
      label={label}
      src={page.image.url}
      width={page.width}
      height={page.height}
      adding={state.adding}
      pins={pins}
      onPlace={(x, y) => onPlace({ offsetXPercentage: x, offsetYPercentage: y, pageNumber: page.number })}
      onOpen={onOpen}
    />
  );
}

/** Where a click (or Enter, at the centre) landed on `element`, in percentages of its box. */
function offsetsOf(element: Element, event: MouseEvent | KeyboardEvent): [number, number] {
  if (!(event instanceof MouseEvent)) return [50, 50];
  return percentOf({ x: event.clientX, y: event.clientY }, element.getBoundingClientRect());
}

function PinSurface({
  label,
  src,
  width,
  height,
  adding,
  pins,
  onPlace,
  onOpen,
}: {
  label: string;
  src: string;
  width?: number;
  height?: number;
  adding: boolean;
  pins: Thread[];
  onPlace: (x: number, y: number) => void;
  onOpen: (thread: Thread) => void;
}) {
  const image = useRef<HTMLImageElement>(null);
  const placeAt = (event: MouseEvent | KeyboardEvent) => {
    if (!adding || !image.current) return;
    const [x, y] = offsetsOf(image.current, event);
    onPlace(x, y);
  };
  return (
    <figure class={`surface${adding ? ' adding' : ''}`} onClick={placeAt}>
      <img
        ref={image}
        src={src}
        alt={label}
        width={width}
        height={height}
        // A 40-page PDF asks for the pages near the view first, not all at once.
        loading="lazy"
        tabIndex={adding ? 0 : undefined}
        onKeyDown={(event) => {
          if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            placeAt(event);
          }
        }}
      />
      <Pins pins={pins} onOpen={onOpen} />
    </figure>
  );
}

function Pins({
  pins,
  onOpen,
  positionOf,
}: {
  pins: Thread[];
  onOpen: (thread: Thread) => void;
  positionOf?: (thread: Thread) => { x: number; y: number };
}) {
  const at = positionOf ?? ((thread: Thread) => ({ x: thread.offsetXPercentage ?? 0, y: thread.offsetYPercentage ?? 0 }));
  return (
    <>
      {pins.map((thread) => (
        <button
          key={thread.id}
          type="button"
          data-pin={thread.id}
          class={`pin${thread.resolved ? ' resolved' : ''}${isUnread(thread) ? ' unread' : ''}`}
          aria-label={`Comment ${thread.number}`}
          // The name stays "Comment N" (DESIGN.md); that it is unread is its description, not only a dot.
          title={isUnread(thread) ? 'Unread' : undefined}
          style={{ left: `${Math.min(100, Math.max(0, at(thread).x))}%`, top: `${Math.min(100, Math.max(0, at(thread).y))}%` }}
          onClick={(event) => {
            event.stopPropagation();
            onOpen(thread);
          }}
        >
          {thread.number}
        </button>
      ))}
    </>
  );
}

function VideoSurface({ markup, state, threads, onPlace, onOpen, videoRef, currentTime, onTime }: SurfacesProps) {
  const video = markup.video;
  if (!video) return <p class="board-note">This video has no playable rendition yet.</p>;
  const placeAt = (event: MouseEvent | KeyboardEvent) => {
    if (!state.adding || !videoRef.current) return;
    const [x, y] = offsetsOf(videoRef.current, event);
    onPlace({ offsetXPercentage: x, offsetYPercentage: y });
  };
  const time = () => onTime(videoRef.current?.currentTime ?? 0);
  return (
    <figure class={`surface${state.adding ? ' adding' : ''}`} onClick={placeAt}>
      <video
        ref={videoRef}
        src={video.url}
        poster={video.posterUrl}
        width={video.width}
        height={video.height}
        controls={!state.adding}
        preload="metadata"
        aria-label={`${markup.name}, video`}
        tabIndex={state.adding ? 0 : undefined}
        onTimeUpdate={time}
        onSeeked={time}
        onLoadedMetadata={time}
        onKeyDown={(event) => {
          if (state.adding && (event.key === 'Enter' || event.key === ' ')) {
            event.preventDefault();
            placeAt(event);
          }
        }}
      />
      <Pins pins={threads.filter((thread) => showsAt(thread, currentTime))} onOpen={onOpen} />
    </figure>
  );
}

function WebpageSurface({ markup, store, state, threads, viewModes, onPlace, onOpen }: SurfacesProps) {
  const modes = viewModes ?? [];
  const [selected, setSelected] = useState(0);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const mode = modes[selected];
  const inMode = mode ? threads.filter((thread) => thread.viewModeId === mode.id) : threads;
  const select = (index: number) => {
    const next = (index + modes.length) % modes.length;
    setSelected(next);
    tabs.current[next]?.focus();
  };
  // A thread opened from the list is shown on its own view mode's screenshot, where its pin is.
  const openModeId = threads.find((thread) => thread.id === state.openThreadId)?.viewModeId;
  useEffect(() => {
    const index = modes.findIndex((candidate) => candidate.id === openModeId);
    if (index >= 0) setSelected(index);
  }, [openModeId]);
  const screenshot = mode ? markup.pageScreenshots?.find((shot) => shot.viewModeId === mode.id) : undefined;
  const panel =
    !mode || !screenshot ? (
      <p class="board-note">This page has no screenshots to show.</p>
    ) : screenshot.state === 'pending' ? (
      <div class="card" role="status" aria-live="polite">
        <p class="board-note">Rendering the page… The {mode.name.toLowerCase()} screenshot appears here when it is ready.</p>
        <progress aria-label={`Rendering the ${mode.name} screenshot`} />
        <UnplacedPins threads={inMode} onOpen={onOpen} reason="Comments in this view" />
      </div>
    ) : screenshot.state === 'unavailable' || !screenshot.url || !screenshot.width || !screenshot.height ? (
      <div>
        <p class="board-note">
          No {mode.name.toLowerCase()} screenshot of this page: {screenshot.error ?? 'it could not be rendered.'}
        </p>
        <UnplacedPins threads={inMode} onOpen={onOpen} reason="Comments in this view" />
      </div>
    ) : (
      <PageScreenshotSurface
        key={mode.id}
        label={`${markup.name} — ${mode.name}`}
        src={screenshot.url}
        width={screenshot.width}
        height={screenshot.height}
        markup={markup}
        mode={mode}
        store={store}
        adding={state.adding}
        threads={inMode}
        onPlace={onPlace}
        onOpen={onOpen}
      />
    );
  if (modes.length === 0) return panel;
  return (
    <div>
      <div role="tablist" aria-label="View modes" class="tabs">
        {modes.map((candidate, index) => (
          <button
            key={candidate.id}
            ref={(element) => {
              tabs.current[index] = element;
            }}
            type="button"
            role="tab"
            id={`view-tab-${candidate.id}`}
            aria-selected={index === selected}
            aria-controls="view-panel"
            tabIndex={index === selected ? 0 : -1}
            onClick={() => setSelected(index)}
            onKeyDown={(event) => {
              if (event.key === 'ArrowRight') select(index + 1);
              if (event.key === 'ArrowLeft') select(index - 1);
            }}
          >
            {candidate.name} ({candidate.width}×{candidate.height})
          </button>
        ))}
      </div>
      <div role="tabpanel" id="view-panel" aria-labelledby={mode ? `view-tab-${mode.id}` : undefined}>
        {panel}
      </div>
    </div>
  );
}

/**
 * Comments of a view mode that have no place on its screenshot (none yet, or their element is not on it): listed, never placed at a guess.
 */
function UnplacedPins({
  threads,
  onOpen,
  reason = 'Not on this screenshot',
}: {
  threads: Thread[];
  onOpen: (thread: Thread) => void;
  reason?: string;
}) {
  if (threads.length === 0) return null;
  return (
    <div class="pin-strip" role="group" aria-label={`${reason}: ${threads.length} comment${threads.length === 1 ? '' : 's'}`}>
      <span class="board-note">{reason}:</span>
      <Pins pins={threads} onOpen={onOpen} />
    </div>
  );
}

/**
 * One view mode's full-page screenshot with the pins of its threads on their elements (the layout
 * read from the API), and "Add comment" placing a pin on the deepest element under the click.
 */
function PageScreenshotSurface({
  label,
  src,
  width,
  height,
  markup,
  mode,
  store,
  adding,
  threads,
  onPlace,
  onOpen,
}: {
  label: string;
  src: string;
  width: number;
  height: number;
  markup: Markup;
  mode: ViewMode;
  store: BoardStore;
  adding: boolean;
  threads: Thread[];
  onPlace: (placement: Placement) => void;
  onOpen: (thread: Thread) => void;
}) {
  const image = useRef<HTMLImageElement>(null);
  const [layout, setLayout] = useState<PageLayout>();
  const [failure, setFailure] = useState<string>();
  // Read again when a thread names a selector the layout has not looked for (made after the render; the worker locates it).
  const unknown = layout ? unlocatedPaths(threads, layout).join('\n') : '';
  useEffect(() => {
    let cancelled = false;
    store
      .pageLayout(mode.id)
      .then((read) => !cancelled && setLayout(read))
      .catch((error: unknown) => !cancelled && setFailure(error instanceof Error ? error.message : 'The page layout could not be read.'));
    return () => {
      cancelled = true;
    };
  }, [store, mode.id, unknown]);
  const placed = layout ? threads.flatMap((thread) => (pagePinOf(thread, layout) ? [thread] : [])) : [];
  const unplaced = layout ? threads.filter((thread) => !placed.includes(thread)) : [];
  // Enter pressed before the layout was read: placed at the centre once it arrives, not dropped.
  const [enterWaiting, setEnterWaiting] = useState(false);
  useEffect(() => {
    if (!enterWaiting || !layout) return;
    setEnterWaiting(false);
    if (adding) placeAt(new KeyboardEvent('keydown', { key: 'Enter' }));
  }, [enterWaiting, layout, adding]);
  const placeAt = (event: MouseEvent | KeyboardEvent) => {
    if (!adding || !image.current) return;
    if (!layout) {
      if (!(event instanceof MouseEvent)) setEnterWaiting(true);
      return;
    }
    const rect = image.current.getBoundingClientRect();
    // A click where it landed; Enter in the middle of the part of the screenshot in view.
    const client =
      event instanceof MouseEvent
        ? { x: event.clientX, y: event.clientY }
        : { x: rect.left + rect.width / 2, y: (Math.max(rect.top, 0) + Math.min(rect.bottom, window.innerHeight)) / 2 };
    const point = { x: ((client.x - rect.left) / rect.width) * layout.width, y: ((client.y - rect.top) / rect.height) * layout.height };
    const target = elementAt(layout, point);
    if (!target) return;
    onPlace({
      offsetXPercentage: target.offsetXPercentage,
      offsetYPercentage: target.offsetYPercentage,
      element: { path: target.path, url: markup.url ?? '', viewModeId: mode.id, viewport: { width: mode.width, height: mode.height } },
    });
  };
  return (
    <>
      <figure class={`surface page-screenshot${adding ? ' adding' : ''}`} onClick={placeAt}>
        <img
          ref={image}
          src={src}
          alt={label}
          width={width}
          height={height}
          tabIndex={adding ? 0 : undefined}
          onKeyDown={(event) => {
            if (event.key === 'Enter' || event.key === ' ') {
              event.preventDefault();
              placeAt(event);
            }
          }}
        />
        {layout ? <Pins pins={placed} onOpen={onOpen} positionOf={(thread) => pagePinOf(thread, layout)!} /> : null}
      </figure>
      {failure ? (
        <p class="message message-error" role="alert">
          {failure}
        </p>
      ) : !layout ? (
        <p class="board-note" role="status">
          Placing the comments…
        </p>
      ) : (
        <UnplacedPins threads={unplaced} onOpen={onOpen} />
      )}
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// The thread list beside the board
// ---------------------------------------------------------------------------------------------

function whereOf(markup: Markup, thread: Thread, viewModes?: ViewMode[]): string | undefined {
  if (markup.type === 'webpage') return viewModes?.find((mode) => mode.id === thread.viewModeId)?.name;
  if (markup.type === 'pdf') return `Page ${thread.pageNumber ?? 1}`;
  if (markup.type === 'video') return `${formatTime(thread.startTime ?? 0)}–${formatTime(thread.endTime ?? thread.startTime ?? 0)}`;
  if (markup.type === 'image' && (markup.images?.length ?? 0) > 1) {
    const index = markup.images!.findIndex((image) => image.id === thread.projectImageId);
    return `Image ${index < 0 ? 1 : index + 1}`;
  }
  return undefined;
}

function ThreadList({
  markup,
  state,
  threads,
  viewModes,
  onFilter,
  onOrder,
  onOpen,
}: {
  markup: Markup;
  state: BoardState;
  threads: Thread[];
  viewModes?: ViewMode[];
  onFilter: (filter: ThreadFilter) => void;
  onOrder: (order: ThreadOrder) => void;
  onOpen: (thread: Thread) => void;
}) {
  const open = state.threads.filter((thread) => !thread.resolved).length;
  return (
    <aside class="thread-list" aria-labelledby="thread-list-heading">
      <h2 id="thread-list-heading">Comments</h2>
      <p class="board-note">
        {open} open, {state.threads.length - open} resolved
      </p>
      <label class="thread-filter">
        Show{' '}
        <select value={state.filter} onChange={(event) => onFilter((event.currentTarget as HTMLSelectElement).value as ThreadFilter)}>
          <option value="all">All comments</option>
          <option value="open">Open only</option>
          <option value="resolved">Resolved only</option>
        </select>
      </label>
      <label class="thread-filter">
        Order{' '}
        <select value={state.order} onChange={(event) => onOrder((event.currentTarget as HTMLSelectElement).value as ThreadOrder)}>
          <option value="number">By number</option>
          <option value="activity">Latest activity</option>
          <option value="position">{markup.type === 'video' ? 'By time' : markup.type === 'pdf' ? 'By page' : 'By position'}</option>
        </select>
      </label>
      {!state.loaded && !state.error ? (
        <p class="board-note" role="status">
          Loading comments…
        </p>
      ) : threads.length === 0 ? (
        <p class="board-note">{state.threads.length ? 'No comments match this filter.' : 'No comments yet.'}</p>
      ) : (
        <ol class="threads">
          {orderThreads(
            threads,
            state.order,
            markup.images?.map((image) => image.id),
          ).map((thread) => {
            const where = whereOf(markup, thread, viewModes);
            return (
              <li key={thread.id} class={`thread-item${thread.resolved ? ' resolved' : ''}`}>
                <button
                  type="button"
                  class="thread-open secondary"
                  aria-label={`Open comment #${thread.number}`}
                  onClick={() => onOpen(thread)}
                >
                  #{thread.number}
                </button>
                <div class="thread-summary">
                  <span class="thread-text">{thread.messages[0]?.content ?? ''}</span>
                  <span class="board-note">
                    {thread.user.name}
                    {where ? ` · ${where}` : ''}
                    {thread.messages.length > 1 ? ` · ${thread.messages.length - 1} repl${thread.messages.length === 2 ? 'y' : 'ies'}` : ''}
                    {thread.resolved ? ' · Resolved' : ''}
                  </span>
                  {isUnread(thread) ? <span class="badge">Unread</span> : null}
                </div>
              </li>
            );
          })}
        </ol>
      )}
    </aside>
  );
}

// ---------------------------------------------------------------------------------------------
// Dialogs
// ---------------------------------------------------------------------------------------------

export function NewCommentDialog({
  store,
  onPosted,
  returnFocus,
}: {
  store: BoardStore;
  onPosted: (thread: Thread) => void;
  returnFocus: () => HTMLElement | null | undefined;
}) {
  const [text, setText] = useState('');
  const [mentions, setMentions] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const error = useBoardState(store).error;
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!text.trim() || busy) return;
    setBusy(true);
    const thread = await store.post(text.trim(), mentions);
    setBusy(false);
    if (thread) onPosted(thread);
  };
  return (
    <Dialog title="New comment" onClose={() => store.cancelDraft()} returnFocus={returnFocus}>
      <form class="board-form" onSubmit={submit}>
        <label for="new-comment-text">Comment</label>
        <textarea
          id="new-comment-text"
          rows={4}
          value={text}
          autofocus
          onInput={(event) => setText((event.currentTarget as HTMLTextAreaElement).value)}
        />
        <MentionPicker store={store} selected={mentions} onChange={setMentions} />
        {error ? (
          <p class="message message-error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="board-actions">
          <button type="submit" disabled={busy || !text.trim()}>
            Post
          </button>
        </div>
      </form>
    </Dialog>
  );
}

const when = (ms: number) => new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function ThreadDialog({
  thread,
  markup,
  store,
  viewModes,
  fallbackFocus,
}: {
  thread: Thread;
  markup: Markup;
  store: BoardStore;
  /** A webpage markup's view modes: the dialog says which one the thread is on. */
  viewModes?: ViewMode[];
  fallbackFocus: () => HTMLElement | null;
}) {
  const [reply, setReply] = useState('');
  const [mentions, setMentions] = useState<string[]>([]);
  const [attachments, setAttachments] = useState<PendingAttachment[]>([]);
  const [busy, setBusy] = useState(false);
  const members = useBoardState(store).members;
  const canSend = !busy && !uploading(attachments) && (reply.trim() !== '' || uploadedIds(attachments).length > 0);
  useEffect(() => {
    if (thread.messages.some((message) => message.mentionIds?.length)) void store.loadMembers();
  }, [thread, store]);
  const [editing, setEditing] = useState<string>();
  const [edited, setEdited] = useState('');
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const [confirmingMessage, setConfirmingMessage] = useState<string>();
  const confirmDelete = useRef<HTMLButtonElement>(null);
  const messageList = useRef<HTMLOListElement>(null);
  const replyBox = useRef<HTMLTextAreaElement>(null);
  // Where the focus goes once the next render is on screen: no action leaves it on a control that went away (or on <body>).
  const [focusNext, setFocusNext] = useState<string>();
  useEffect(() => {
    if (focusNext === undefined) return;
    setFocusNext(undefined);
    const target =
      focusNext === 'reply' ? replyBox.current : messageList.current?.querySelector<HTMLElement>(`[data-focus="${focusNext}"]`);
    (target ?? messageList.current?.closest('dialog')?.querySelector<HTMLElement>('h2'))?.focus();
  }, [focusNext]);
  // The confirmation takes the focus, so Enter confirms and Tab reaches "Keep it".
  useEffect(() => {
    if (confirmingDelete) confirmDelete.current?.focus();
  }, [confirmingDelete]);
  useEffect(() => {
    if (confirmingMessage) setFocusNext(`confirm-${confirmingMessage}`);
  }, [confirmingMessage]);
  useEffect(() => {
    if (editing) setFocusNext(`editor-${editing}`);
  }, [editing]);
  const canReply = thread.scopes.includes('create-message');
  const canResolve = thread.scopes.includes('resolve-thread');
  const canDelete = thread.scopes.includes('delete-thread');
  const where = whereOf(markup, thread, viewModes);

  const send = async (event: Event) => {
    event.preventDefault();
    if (!canSend) return;
    setBusy(true);
    if (await store.reply(thread.id, reply.trim(), mentions, uploadedIds(attachments))) {
      setReply('');
      setMentions([]);
      setAttachments([]);
    }
    setBusy(false);
    // "Send" is disabled while it works, which takes the focus from it: the reply box has it next.
    setFocusNext('reply');
  };
  const stopEditing = (messageId: string) => {
    setEditing(undefined);
    setFocusNext(`edit-${messageId}`);
  };
  const saveEdit = async (event: Event, messageId: string) => {
    event.preventDefault();
    if (!edited.trim()) return;
    if (await store.editMessage(thread.id, messageId, edited.trim())) stopEditing(messageId);
  };
  const deleteMessage = async (messageId: string) => {
    const deleted = await store.deleteMessage(thread.id, messageId);
    setConfirmingMessage(undefined);
    setFocusNext(deleted ? 'reply' : `delete-${messageId}`);
  };

  return (
    <Dialog title={`Comment ${thread.number}`} onClose={() => store.open(undefined)} fallbackFocus={fallbackFocus} class="thread-dialog">
      <p class="board-note">
        {thread.resolved ? 'Resolved' : 'Open'}
        {where ? ` · ${where}` : ''}
      </p>
      <ol class="messages" ref={messageList}>
        {thread.messages.map((message, index) => (
          <li key={message.id} class="message-item">
            <p class="message-meta">
              <strong>{message.user.name}</strong> <span class="board-note">{when(message.createdAt)}</span>
              {message.modifiedAt > message.createdAt ? <span class="board-note"> (edited)</span> : null}
            </p>
            {editing === message.id ? (
              <form class="board-form" onSubmit={(event) => saveEdit(event, message.id)}>
                <label for={`edit-${message.id}`}>Edit message</label>
                <textarea
                  id={`edit-${message.id}`}
                  data-focus={`editor-${message.id}`}
                  rows={3}
                  value={edited}
                  onInput={(event) => setEdited((event.currentTarget as HTMLTextAreaElement).value)}
                />
                <div class="board-actions">
                  <button type="submit">Save</button>
                  <button type="button" class="secondary" onClick={() => stopEditing(message.id)}>
                    Cancel
                  </button>
                </div>
              </form>
            ) : (
              <p class="message-text">{message.content}</p>
            )}
            {message.attachments?.length ? <AttachmentList attachments={message.attachments} /> : null}
            {message.mentionIds?.length ? (
              <p class="board-note">
                Mentioned: {message.mentionIds.map((id) => members?.find((member) => member.id === id)?.name ?? 'a member').join(', ')}
              </p>
            ) : null}
            {confirmingMessage === message.id ? (
              <div class="board-confirm" role="group" aria-label={`Delete message ${index + 1}?`}>
                <p class="board-note">Delete this message? This cannot be undone.</p>
                <div class="board-actions">
                  <button type="button" class="danger" data-focus={`confirm-${message.id}`} onClick={() => void deleteMessage(message.id)}>
                    Yes, delete message {index + 1}
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => {
                      setConfirmingMessage(undefined);
                      setFocusNext(`delete-${message.id}`);
                    }}
                  >
                    Keep it
                  </button>
                </div>
              </div>
            ) : editing !== message.id ? (
              <div class="message-actions">
                {message.scopes.includes('update-message') ? (
                  <button
                    type="button"
                    class="secondary"
                    data-focus={`edit-${message.id}`}
                    aria-label={`Edit message ${index + 1}`}
                    onClick={() => {
                      setEditing(message.id);
                      setEdited(message.content);
                    }}
                  >
                    Edit
                  </button>
                ) : null}
                {index > 0 && message.scopes.includes('delete-message') ? (
                  <button
                    type="button"
                    class="secondary"
                    data-focus={`delete-${message.id}`}
                    aria-label={`Delete message ${index + 1}`}
                    onClick={() => setConfirmingMessage(message.id)}
                  >
                    Delete
                  </button>
                ) : null}
              </div>
            ) : null}
          </li>
        ))}
      </ol>
      {canReply ? (
        <form class="board-form" onSubmit={send}>
          <label for={`reply-${thread.id}`}>Reply</label>
          <textarea
            id={`reply-${thread.id}`}
            ref={replyBox}
            rows={3}
            value={reply}
            onInput={(event) => setReply((event.currentTarget as HTMLTextAreaElement).value)}
          />
          <MentionPicker store={store} selected={mentions} onChange={setMentions} />
          <AttachmentPicker store={store} pending={attachments} onChange={setAttachments} />
          <div class="board-actions">
            <button type="submit" disabled={!canSend}>
              Send
            </button>
          </div>
        </form>
      ) : (
        <p class="board-note">{refusalOf(markup) ?? 'You cannot reply to this comment.'}</p>
      )}
      <ErrorLine store={store} />
      {canResolve || canDelete ? (
        <div class="board-actions">
          {canResolve ? (
            <button type="button" class="secondary" onClick={() => void store.setResolved(thread.id, !thread.resolved)}>
              {thread.resolved ? 'Reopen' : 'Resolve'}
            </button>
          ) : null}
          {canDelete && !confirmingDelete ? (
            <button type="button" class="secondary danger" onClick={() => setConfirmingDelete(true)}>
              Delete thread
            </button>
          ) : null}
        </div>
      ) : null}
      {canDelete && confirmingDelete ? (
        <div class="board-confirm" role="group" aria-label={`Delete comment ${thread.number}?`}>
          <p class="board-note">Delete comment {thread.number} and all its replies? This cannot be undone.</p>
          <div class="board-actions">
            <button type="button" class="danger" ref={confirmDelete} onClick={() => void store.deleteThread(thread.id)}>
              Delete comment {thread.number}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirmingDelete(false)}>
              Keep it
            </button>
          </div>
        </div>
      ) : null}
    </Dialog>
  );
}

/** Members to mention (`mentionIds`), loaded when first opened. */
function MentionPicker({ store, selected, onChange }: { store: BoardStore; selected: string[]; onChange: (ids: string[]) => void }) {
  const members = useBoardState(store).members;
  if (!store.canMention) return null;
  return (
    <details class="mentions" onToggle={(event) => (event.currentTarget as HTMLDetailsElement).open && void store.loadMembers()}>
      <summary>Mention people{selected.length ? ` (${selected.length})` : ''}</summary>
      {!members ? (
        <p class="board-note">Loading members…</p>
      ) : members.length === 0 ? (
        <p class="board-note">Nobody else can be mentioned here.</p>
      ) : (
        <fieldset>
          <legend>Notify</legend>
          {members.map((member) => (
            <label key={member.id} class="mention">
              <input
                type="checkbox"
                checked={selected.includes(member.id)}
                onChange={(event) => {
                  const on = (event.currentTarget as HTMLInputElement).checked;
                  onChange(on ? [...selected, member.id] : selected.filter((id) => id !== member.id));
                }}
              />{' '}
              {member.name}
              {member.email && member.email !== member.name ? <span class="board-note"> {member.email}</span> : null}
            </label>
          ))}
        </fieldset>
      )}
    </details>
  );
}

/** The store's error inside a dialog (the page behind a modal dialog is out of reach). */
function ErrorLine({ store }: { store: BoardStore }) {
  const error = useBoardState(store).error;
  return error ? (
    <p class="message message-error" role="alert">
      {error}
    </p>
  ) : null;
}
