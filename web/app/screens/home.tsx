import { useEffect, useState } from 'preact/hooks';
import { detailOf, isUnauthorized, sessionWorkspaces, type WorkspaceMembership } from '../browse.js';
import { ErrorMessage, Loading, ScreenHeading } from '../components.js';
import { FolderBrowser, folderPath } from './browse.js';

/**
 * The signed-in landing page: each workspace the member belongs to (GET /auth/session, with their
 * role), its top-level folders and markups, search, and what their role lets them do there.
 */
export function Home({ token, onUnauthorized }: { token: string; onUnauthorized: () => void }) {
  const [workspaces, setWorkspaces] = useState<WorkspaceMembership[]>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    let cancelled = false;
    sessionWorkspaces(token)
      .then((loaded) => !cancelled && setWorkspaces(loaded))
      .catch((failure: unknown) => {
        if (cancelled) return;
        if (isUnauthorized(failure)) return onUnauthorized();
        setError(detailOf(failure, 'Loading your workspaces failed.'));
      });
    return () => {
      cancelled = true;
    };
  }, [token]);

  return (
    <main>
      <ScreenHeading>Your markups</ScreenHeading>
      {error ? (
        <ErrorMessage detail={error} />
      ) : !workspaces ? (
        <Loading label="Loading your markups…" />
      ) : workspaces.length === 0 ? (
        <p class="message">You are not a member of any workspace yet.</p>
      ) : (
        workspaces.map((workspace) => (
          <section class="card" key={workspace.id} aria-labelledby={`workspace-${workspace.id}`}>
            <div class="section-head">
              <h2 id={`workspace-${workspace.id}`}>
                <a href={folderPath(workspace.id, workspace.rootFolderId)}>{workspace.name}</a>
              </h2>
              <span class="role">Your role: {workspace.role}</span>
            </div>
            <FolderBrowser
              token={token}
              workspace={workspace}
              folderId={workspace.rootFolderId}
              canCreate={workspace.role !== 'viewer'}
              moveTargets={[]}
              onUnauthorized={onUnauthorized}
            />
          </section>
        ))
      )}
    </main>
  );
}
