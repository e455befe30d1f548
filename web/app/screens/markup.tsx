import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorMessage, Loading, ScreenHeading } from '../components.js';

interface Markup {
  id: string;
  name: string;
  type?: string;
}

/**
 * `/markups/{id}`, where every `markupUrl` leads. For now it names the markup; the board (its
 * images, pages, video or screenshots with their pins, and the threads) comes from `web/board/`.
 */
export function MarkupScreen({ id, token, onUnauthorized }: { id: string; token: string; onUnauthorized: () => void }) {
  const [markup, setMarkup] = useState<Markup>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    let cancelled = false;
    setMarkup(undefined);
    setError(undefined);
    api<Markup>(`/markups/${encodeURIComponent(id)}`, { token })
      .then((result) => !cancelled && setMarkup(result))
      .catch((failure: unknown) => {
        if (cancelled) return;
        if (failure instanceof ApiError && failure.status === 401) return onUnauthorized();
        setError(failure instanceof ApiError ? failure.detail : 'Loading this markup failed.');
      });
    return () => {
      cancelled = true;
    };
  }, [id, token]);

  return (
    <main>
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
          <p class="card">
            The board for this markup is coming: its {describeType(markup.type)} with their pins, and its comments beside them, where you can add, reply to and resolve comments.
          </p>
        </>
      ) : (
        <Loading label="Loading the markup…" />
      )}
    </main>
  );
}

function describeType(type: string | undefined): string {
  switch (type) {
    case 'image':
      return 'images';
    case 'pdf':
      return 'pages';
    case 'video':
      return 'video';
    case 'webpage':
      return 'page screenshots';
    default:
      return 'content';
  }
}
