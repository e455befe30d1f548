import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Board, BoardStore, boardTransport, type Markup, type Request, type ViewMode } from '../../board/index.js';
import '../../board/board.css';
import { followMarkup, LiveClient, LiveStatus } from '../../live/index.js';
import { api, ApiError } from '../api.js';
import { ErrorMessage, Loading, ScreenHeading } from '../components.js';

/** How often a converting markup is read again: from 1 s, half as often each time, at most every 5 s. */
const FIRST_POLL_MS = 1000;
const MAX_POLL_MS = 5_000;

const converting = (markup: Markup) =>
  markup.type !== 'webpage' && (markup.isReady === false || markup.conversionStatus === 'pending') && markup.conversionStatus !== 'failed';
/** A webpage whose full-page screenshots are still rendering: the board shows the others and is read again the same way. */
const rendering = (markup: Markup) => markup.type === 'webpage' && (markup.pageScreenshots ?? []).some((shot) => shot.state === 'pending');

/**
 * `/markups/{id}`, where every `markupUrl` leads: the markup's name and its board (web/board): its
 * images, PDF pages, video or full-page screenshots (per view mode) with the pins, and the comments
 * beside them. A markup still converting, or a page still rendering, says so and is read again
 * (with backoff) until it is ready, then appears. Others' comments, replies and resolves, and the
 * conversion finishing, arrive live (web/live): the board follows the markup's events.
 */
export function MarkupScreen({ id, token, onUnauthorized }: { id: string; token: string; onUnauthorized: () => void }) {
  const [markup, setMarkup] = useState<Markup>();
  const [viewModes, setViewModes] = useState<ViewMode[]>();
  const [error, setError] = useState<string>();

  const request = useMemo((): Request => {
    async function request<T>(path: string, options: { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown } = {}): Promise<T> {
      try {
        return await api<T>(path, { ...options, token });
      } catch (failure) {
        if (failure instanceof ApiError && failure.status === 401) onUnauthorized();
        throw failure;
      }
    }
    return request;
  }, [token]);
  const store = useMemo(() => new BoardStore(boardTransport(request), id), [request, id]);
  const live = useMemo(() => new LiveClient(request), [request]);
  useEffect(() => () => live.close(), [live]);
  /** Reads the markup again now (a live markup event), replacing any poll that was waiting. */
  const reloadMarkup = useRef<() => void>(() => undefined);
  useEffect(() => followMarkup(live, store, { onMarkup: () => reloadMarkup.current() }), [live, store]);

  useEffect(() => {
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let viewModesRead = false;
    setMarkup(undefined);
    setError(undefined);
    reloadMarkup.current = () => {
      if (cancelled) return;
      clearTimeout(timer);
      void load(FIRST_POLL_MS);
    };
    const load = async (delay: number) => {
      try {
        const result = await request<Markup>(`/markups/${encodeURIComponent(id)}`);
        if (cancelled) return;
        setMarkup(result);
        if (result.type === 'webpage' && !viewModesRead) {
          viewModesRead = true;
          setViewModes(
            await boardTransport(request)
              .viewModes(id)
              .catch(() => []),
          );
        }
        clearTimeout(timer);
        if (converting(result) || rendering(result)) timer = setTimeout(() => void load(Math.min(MAX_POLL_MS, delay * 1.5)), delay);
      } catch (failure) {
        if (cancelled || (failure instanceof ApiError && failure.status === 401)) return;
        setError(failure instanceof ApiError ? failure.detail : 'Loading this markup failed.');
      }
    };
    void load(FIRST_POLL_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [id, request]);

  return (
    <main class="wide">
      <p>
        <a href="/">All markups</a>
      </p>
      {error ? (
        <>
          <ScreenHeading>Markup not available</ScreenHeading>
          <ErrorMessage detail={error} />
        </>
      ) : markup ? (
        <>
          <ScreenHeading>{markup.name}</ScreenHeading>
          {markup.conversionStatus === 'failed' ? (
            <ErrorMessage detail={`This file could not be converted: ${conversionErrorOf(markup)}`} />
          ) : converting(markup) ? (
            <>
              <ConversionProgress markup={markup} />
              <LiveStatus live={live} class="board-note" />
            </>
          ) : (
            <Board markup={markup} store={store} viewModes={viewModes} live={live} />
          )}
        </>
      ) : (
        <Loading label="Loading the markup…" />
      )}
    </main>
  );
}

/** A converting markup: what is being done, how far it has come (when the worker says), and that it appears by itself. */
function ConversionProgress({ markup }: { markup: Markup }) {
  const progress = markup.conversionProgress;
  const work = markup.type === 'pdf' ? 'PDF into pages' : markup.type === 'video' ? 'video for the web' : 'file into images';
  const pages =
    progress?.pagesConverted === undefined
      ? ''
      : progress.pageCount
        ? ` ${progress.pagesConverted} of ${progress.pageCount} pages done.`
        : ` ${progress.pagesConverted} ${progress.pagesConverted === 1 ? 'page' : 'pages'} done.`;
  const percent = progress?.percent;
  return (
    <div class="card">
      <p class="message" role="status" aria-live="polite">
        Converting the {work}…{percent === undefined ? '' : ` ${percent}%.`}
        {pages} It appears here when it is ready.
      </p>
      {percent === undefined ? (
        <progress aria-label="Conversion progress" />
      ) : (
        <progress aria-label="Conversion progress" max={100} value={percent} />
      )}
    </div>
  );
}

function conversionErrorOf(markup: Markup): string {
  const failure = markup.conversionError;
  if (typeof failure === 'string') return failure;
  return failure?.detail ?? failure?.message ?? 'the converter gave no reason.';
}
