import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorMessage, Loading, ScreenHeading } from '../components.js';

interface Workspace {
  id: string;
  name: string;
}
interface MarkupSummary {
  id: string;
  name: string;
}
interface Page<T> {
  data: T[];
}

type Loaded = { workspace: Workspace; markups: MarkupSummary[] }[];

/** The signed-in landing page: each of the member's workspaces with its markups, by name. */
export function Home({ token, onUnauthorized }: { token: string; onUnauthorized: () => void }) {
  const [loaded, setLoaded] = useState<Loaded>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    let cancelled = false;
    (async (): Promise<Loaded> => {
      const workspaces = await api<Page<Workspace>>('/workspaces?limit=100', { token }).catch((failure: unknown) => {
        // A credential scoped to one workspace may not list workspaces: its markups are the list.
        if (failure instanceof ApiError && failure.status === 403) return undefined;
        throw failure;
      });
      if (!workspaces) return [{ workspace: { id: 'current', name: 'Markups' }, markups: (await api<Page<MarkupSummary>>('/markups?limit=100', { token })).data }];
      return Promise.all(
        workspaces.data.map(async (workspace) => ({
          workspace,
          markups: (await api<Page<MarkupSummary>>(`/markups?workspaceId=${encodeURIComponent(workspace.id)}&limit=100`, { token })).data,
        })),
      );
    })()
      .then((result) => !cancelled && setLoaded(result))
      .catch((failure: unknown) => {
        if (cancelled) return;
        if (failure instanceof ApiError && failure.status === 401) return onUnauthorized();
        setError(failure instanceof ApiError ? failure.detail : 'Loading your markups failed.');
      });
    return () => {
      cancelled = true;
    };
  }, [token]);

  return (
    <main>
      <ScreenHeading>Your markups</ScreenHeading>
      {error ? <ErrorMessage detail={error} /> : loaded ? <Workspaces loaded={loaded} /> : <Loading label="Loading your markups…" />}
    </main>
  );
}

function Workspaces({ loaded }: { loaded: Loaded }) {
  if (loaded.length === 0) return <p class="message">You are not a member of any workspace yet.</p>;
  return (
    <>
      {loaded.map(({ workspace, markups }) => (
        <section class="card" key={workspace.id} aria-labelledby={`workspace-${workspace.id}`}>
          <h2 id={`workspace-${workspace.id}`}>{workspace.name}</h2>
          {markups.length === 0 ? (
            <p class="message">No markups in this workspace yet.</p>
          ) : (
            <ul class="markup-list">
              {markups.map((markup) => (
                <li key={markup.id}>
                  <a href={`/markups/${encodeURIComponent(markup.id)}`}>{markup.name}</a>
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
    </>
  );
}
