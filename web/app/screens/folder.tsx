import { useEffect, useState } from 'preact/hooks';
import { detailOf, getFolder, isUnauthorized, sessionWorkspaces, type FolderWithAncestors, type WorkspaceMembership } from '../browse.js';
import { ErrorMessage, Loading, ScreenHeading } from '../components.js';
import { FolderBrowser, folderPath } from './browse.js';

/** `/workspaces/{workspaceId}/folders/{folderId}`: one folder, the way back up, and its contents. */
export function FolderScreen({
  workspaceId,
  folderId,
  token,
  onUnauthorized,
}: {
  workspaceId: string;
  folderId: string;
  token: string;
  onUnauthorized: () => void;
}) {
  const [loaded, setLoaded] = useState<{ workspace: WorkspaceMembership; folder: FolderWithAncestors }>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    let cancelled = false;
    setLoaded(undefined);
    setError(undefined);
    Promise.all([sessionWorkspaces(token), getFolder(token, folderId)])
      .then(([workspaces, folder]) => {
        if (cancelled) return;
        const workspace = workspaces.find((candidate) => candidate.id === workspaceId && candidate.id === folder.workspaceId);
        if (!workspace) setError('This folder is not in a workspace you belong to.');
        else setLoaded({ workspace, folder });
      })
      .catch((failure: unknown) => {
        if (cancelled) return;
        if (isUnauthorized(failure)) return onUnauthorized();
        setError(detailOf(failure, 'Loading this folder failed.'));
      });
    return () => {
      cancelled = true;
    };
  }, [token, workspaceId, folderId]);

  if (error) {
    return (
      <main>
        <p>
          <a href="/">All markups</a>
        </p>
        <ScreenHeading>Folder not available</ScreenHeading>
        <ErrorMessage detail={error} />
      </main>
    );
  }
  if (!loaded) {
    return (
      <main>
        <Loading label="Loading the folder…" />
      </main>
    );
  }
  const { workspace, folder } = loaded;
  const isRoot = folder.id === workspace.rootFolderId;
  const trail = folder.ancestors.map((ancestor) => ({
    id: ancestor.id,
    name: ancestor.id === workspace.rootFolderId ? workspace.name : ancestor.name,
  }));
  return (
    <main>
      <nav aria-label="Breadcrumb">
        <ol class="breadcrumb">
          <li>
            <a href="/">All markups</a>
          </li>
          {trail.map((crumb) => (
            <li key={crumb.id}>
              <a href={folderPath(workspace.id, crumb.id)}>{crumb.name}</a>
            </li>
          ))}
        </ol>
      </nav>
      <ScreenHeading>{isRoot ? workspace.name : folder.name}</ScreenHeading>
      <FolderBrowser
        key={folder.id}
        token={token}
        workspace={workspace}
        folderId={folder.id}
        folderName={isRoot ? undefined : folder.name}
        canCreate={folder.scopes.includes('folderItem:edit')}
        moveTargets={trail}
        onUnauthorized={onUnauthorized}
      />
    </main>
  );
}
