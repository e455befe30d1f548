import { useEffect, useMemo, useState } from 'preact/hooks';
import { Board, BoardStore, boardTransport, type Markup, type Request, type ViewMode } from '../../board/index.js';
import '../../board/board.css';
import { api, ApiError } from '../api.js';
import { ErrorMessage, Loading, ScreenHeading } from '../components.js';

/** How often a converting markup is read again: from 1 s, half as often each time, at most every 10 s. */
const FIRST_POLL_MS = 1000;
const MAX_POLL_MS = 10_000;

const converting = (markup: Markup) => markup.type !== 'webpage' && (markup.isReady === false || markup.conversionStatus === 'pending') && markup.conversionStatus !== 'failed';
/** A webpage whose full-page screenshots are still rendering: the board shows the others and is read again the same way. */
const rendering = (markup: Markup) => markup.type === 'webpage' && (markup.pageScreenshots ?? []).some((shot) => shot.state === 'pending');

/**
 * `/markups/{id}`, where every `markupUrl` leads: the markup's name and its board (web/board): its
 * images, PDF pages, video or full-page screenshots (per view mode) with the pins, and the comments
 * beside them. A markup still converting, or a page still rendering, says so and is read again
 * (with backoff) until it is ready, then appears.
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

  useEffect(() => {
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let viewModesRead = false;
    setMarkup(undefined);
    setError(undefined);
    const load = async (delay: number) => {
      try {
        const result = await request<Markup>(`/markups/${encodeURIComponent(id)}`);
        if (cancelled) return;
        setMarkup(result);
        if (result.type === 'webpage' && !viewModesRead) {
          viewModesRead = true;
          setViewModes(await boardTransport(request).viewModes(id).catch(() => []));
        }
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
            <div class="card" role="status" aria-live="polite">
              <p class="message">Converting the {markup.type === 'pdf' ? 'PDF into pages' : markup.type === 'video' ? 'video for the web' : 'file into images'}… It appears here when it is ready.</p>
              <progress aria-label="Conversion progress" />
            </div>
          ) : (
            <Board markup={markup} store={store} viewModes={viewModes} />
          )}
        </>
      ) : (
        <Loading label="Loading the markup…" />
      )}
    </main>
  );
}

function conversionErrorOf(markup: Markup): string {
  const failure = markup.conversionError;
  if (typeof failure === 'string') return failure;
  return failure?.detail ?? failure?.message ?? 'the converter gave no reason.';
}
