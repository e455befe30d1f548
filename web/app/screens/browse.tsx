import { useEffect, useRef, useState } from 'preact/hooks';
import {
  archiveItem,
  createFolder,
  createFromFiles,
  createFromUrl,
  deleteItem,
  detailOf,
  isUnauthorized,
  listFolder,
  markupGroups,
  moveItem,
  renameItem,
  searchMarkups,
  uploadFile,
  type Entry,
  type Markup,
  type MarkupCard as Card,
  type WorkspaceMembership,
} from '../browse.js';
import { ErrorMessage, Loading } from '../components.js';

/** Where a folder opens in the app. */
export const folderPath = (workspaceId: string, folderId: string) =>
  `/workspaces/${encodeURIComponent(workspaceId)}/folders/${encodeURIComponent(folderId)}`;

export interface BrowserProps {
  token: string;
  workspace: WorkspaceMembership;
  folderId: string;
  /** The folder's name, on a folder's own page (the workspace's root folder is named by its workspace). */
  folderName?: string;
  /** The folder's own scopes (may the caller add to it?) and where its items may move. */
  canCreate: boolean;
  moveTargets: { id: string; name: string }[];
  onUnauthorized: () => void;
}

/**
 * One folder of a workspace: search, the create controls (from a URL, from files, a folder) when
 * the caller may create, then its folders and markups, each with the actions its scopes allow.
 */
export function FolderBrowser(props: BrowserProps) {
  const { token, workspace, folderId, onUnauthorized } = props;
  const [entries, setEntries] = useState<Entry[]>();
  const [error, setError] = useState<string>();
  const [reloads, setReloads] = useState(0);
  const [results, setResults] = useState<{ query: string; markups: Markup[] }>();
  /** What the last change did, said where a screen reader hears it and where the focus goes (its control may be gone). */
  const [notice, setNotice] = useState<{ text: string; at: number }>();
  const noticeRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (notice) noticeRef.current?.focus();
  }, [notice]);
  /** After a change that worked: the list again, and no failure from before left on screen. */
  const reload = () => {
    setError(undefined);
    setReloads((count) => count + 1);
  };
  const changed = (text: string) => {
    setNotice({ text, at: Date.now() });
    reload();
  };
  const fail = (failure: unknown, fallback: string) => {
    if (isUnauthorized(failure)) onUnauthorized();
    else setError(detailOf(failure, fallback));
  };

  useEffect(() => {
    let cancelled = false;
    listFolder(token, folderId)
      .then((loaded) => {
        if (cancelled) return;
        setEntries(loaded);
      })
      .catch((failure: unknown) => !cancelled && fail(failure, 'Loading this folder failed.'));
    return () => {
      cancelled = true;
    };
  }, [token, folderId, reloads]);

  const label = props.folderName ?? workspace.name;
  return (
    <div class="browser">
      <SearchForm
        // Search covers the whole workspace, from any of its folders.
        label={workspace.name}
        onSearch={(query) =>
          searchMarkups(token, workspace.id, query).then(
            (markups) => setResults({ query, markups }),
            (failure: unknown) => fail(failure, 'Searching failed.'),
          )
        }
        onClear={() => setResults(undefined)}
        searching={!!results}
      />
      {props.canCreate ? <CreateControls {...props} onCreated={reload} onError={fail} /> : null}
      {error ? <ErrorMessage detail={error} /> : null}
      {notice && !error ? (
        <p class="message message-success" role="status" tabIndex={-1} ref={noticeRef} key={notice.at}>
          {notice.text}
        </p>
      ) : null}
      {results ? (
        <SearchResults results={results} />
      ) : entries ? (
        <EntryList
          entries={entries}
          {...props}
          moveTargets={[
            ...props.moveTargets,
            ...entries.filter((entry) => entry.kind === 'folder').map((entry) => ({ id: entry.item.id, name: entry.item.name })),
          ]}
          onChanged={changed}
          onError={fail}
        />
      ) : error ? null : (
        <Loading label={`Loading ${label}…`} />
      )}
    </div>
  );
}

function SearchForm({
  label,
  onSearch,
  onClear,
  searching,
}: {
  label: string;
  onSearch: (query: string) => Promise<void>;
  onClear: () => void;
  searching: boolean;
}) {
  const [query, setQuery] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="inline-form"
      role="search"
      aria-label={`Search ${label}`}
      onSubmit={(event) => {
        event.preventDefault();
        if (!query.trim()) return onClear();
        setBusy(true);
        void onSearch(query.trim()).finally(() => setBusy(false));
      }}
    >
      <input
        type="search"
        aria-label={`Search markups in ${label}`}
        placeholder="Search by name or URL"
        value={query}
        onInput={(event) => setQuery(event.currentTarget.value)}
      />
      <button type="submit" disabled={busy}>
        Search
      </button>
      {searching ? (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setQuery('');
            onClear();
          }}
        >
          Clear search
        </button>
      ) : null}
    </form>
  );
}

function SearchResults({ results }: { results: { query: string; markups: Markup[] } }) {
  return (
    <section aria-label={`Search results for ${results.query}`}>
      <p class="message" role="status">
        {results.markups.length === 0
          ? `No markup matches “${results.query}”.`
          : `${results.markups.length} ${results.markups.length === 1 ? 'markup matches' : 'markups match'} “${results.query}”.`}
      </p>
      <ul class="entries">
        {results.markups.map((markup) => (
          <li key={markup.id} class="entry">
            <MarkupCard markup={markup} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function MarkupCard({ markup }: { markup: Card & { type: string } }) {
  const unread = markup.unreadThreads ?? 0;
  return (
    <div class="entry-main">
      <img class="thumbnail" src={markup.thumbnailUrl} alt={markup.name} loading="lazy" width={160} height={100} />
      <div class="entry-text">
        <a href={`/markups/${encodeURIComponent(markup.id)}`}>{markup.name}</a>
        <span class="entry-meta">
          {describe(markup)}
          {unread > 0 ? (
            <>
              {' · '}
              <strong class="unread-count">{unread} unread</strong>
            </>
          ) : null}
        </span>
      </div>
    </div>
  );
}

function describe(markup: Card & { type: string }): string {
  const threads = `${markup.activeThreads} open ${markup.activeThreads === 1 ? 'comment' : 'comments'}`;
  if (markup.conversionStatus === 'failed') return `${markup.type} · conversion failed`;
  if (!markup.isReady) return `${markup.type} · converting…`;
  return `${markup.type} · ${threads}`;
}

type EntryListProps = BrowserProps & {
  entries: Entry[];
  /** A change worked: `done` says what it did. */
  onChanged: (done: string) => void;
  onError: (failure: unknown, fallback: string) => void;
};

function EntryList(props: EntryListProps) {
  if (props.entries.length === 0) return <p class="message">Nothing in this folder yet.</p>;
  return (
    <ul class="entries" aria-label={`Contents of ${props.folderName ?? props.workspace.name}`}>
      {props.entries.map((entry) => (
        <li key={entry.item.id} class="entry">
          {entry.kind === 'folder' ? (
            <div class="entry-main">
              <span class="thumbnail folder-icon" aria-hidden="true" />
              <div class="entry-text">
                <a href={folderPath(props.workspace.id, entry.item.id)}>{entry.item.name}</a>
                <span class="entry-meta">
                  folder · {entry.item.folderCount ?? 0} folders, {entry.item.projectCount ?? 0} markups
                </span>
              </div>
            </div>
          ) : (
            <MarkupCard markup={entry.markup} />
          )}
          <EntryActions entry={entry} {...props} />
        </li>
      ))}
    </ul>
  );
}

/** Rename, move, archive and delete, each shown only when the item's scopes allow it. */
function EntryActions({ entry, token, moveTargets, onChanged, onError }: EntryListProps & { entry: Entry }) {
  type Mode = 'idle' | 'rename' | 'move' | 'delete';
  const [mode, setMode] = useState<Mode>('idle');
  const [busy, setBusy] = useState(false);
  // A form given up goes back to the button that opened it.
  const [back, setBack] = useState<Mode>();
  const actions = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (mode !== 'idle' || !back) return;
    actions.current?.querySelector<HTMLElement>(`[data-action="${back}"]`)?.focus();
    setBack(undefined);
  }, [mode, back]);
  const cancel = () => {
    setBack(mode);
    setMode('idle');
  };
  const name = entry.item.name;
  // Folders and markups alike: the listed item's scopes, for the item operations these controls call.
  const canEdit = entry.item.scopes.includes('folderItem:edit');
  const canRename = canEdit;
  const canDelete = entry.item.scopes.includes('folderItem:delete');
  const targets = moveTargets.filter((target) => target.id !== entry.item.id && target.id !== entry.item.parentFolderId);
  if (!canRename && !canEdit && !canDelete) return null;

  const run = (work: () => Promise<unknown>, fallback: string, done: string) => {
    setBusy(true);
    work()
      .then(() => {
        setMode('idle');
        onChanged(done);
      })
      .catch((failure: unknown) => onError(failure, fallback))
      .finally(() => setBusy(false));
  };

  if (mode === 'rename') {
    return (
      <NameForm
        label={`New name for ${name}`}
        initial={name}
        submit="Save name"
        busy={busy}
        onCancel={cancel}
        onSubmit={(newName) => run(() => renameItem(token, entry.item.id, newName), 'Renaming failed.', `Renamed ${name} to ${newName}.`)}
      />
    );
  }
  if (mode === 'move') {
    return (
      <MoveForm
        name={name}
        targets={targets}
        busy={busy}
        onCancel={cancel}
        onSubmit={(target) =>
          run(
            () => moveItem(token, entry.item.id, target),
            'Moving failed.',
            `Moved ${name} to ${targets.find((candidate) => candidate.id === target)?.name ?? 'another folder'}.`,
          )
        }
      />
    );
  }
  if (mode === 'delete') {
    return (
      <div class="entry-actions" role="group" aria-label={`Delete ${name}?`}>
        <span class="entry-meta">
          {entry.kind === 'folder' ? 'Delete this folder and everything in it?' : 'Delete this markup and its comments?'}
        </span>
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={() => run(() => deleteItem(token, entry.item.id), 'Deleting failed.', `Deleted ${name}.`)}
        >
          Yes, delete {name}
        </button>
        <button type="button" class="secondary" onClick={cancel}>
          Keep it
        </button>
      </div>
    );
  }
  return (
    <div class="entry-actions" role="group" aria-label={`Actions for ${name}`} ref={actions}>
      {canRename ? (
        <button type="button" class="secondary" data-action="rename" aria-label={`Rename ${name}`} onClick={() => setMode('rename')}>
          Rename
        </button>
      ) : null}
      {canEdit && targets.length > 0 ? (
        <button type="button" class="secondary" data-action="move" aria-label={`Move ${name}`} onClick={() => setMode('move')}>
          Move
        </button>
      ) : null}
      {canEdit ? (
        <button
          type="button"
          class="secondary"
          aria-label={`Archive ${name}`}
          disabled={busy}
          onClick={() =>
            run(
              () => archiveItem(token, entry.item.id),
              'Archiving failed.',
              `Archived ${name}: it is kept in the workspace's archive, out of this list.`,
            )
          }
        >
          Archive
        </button>
      ) : null}
      {canDelete ? (
        <button type="button" class="secondary" data-action="delete" aria-label={`Delete ${name}`} onClick={() => setMode('delete')}>
          Delete
        </button>
      ) : null}
    </div>
  );
}

function NameForm({
  label,
  initial,
  submit,
  busy,
  onSubmit,
  onCancel,
}: {
  label: string;
  initial: string;
  submit: string;
  busy: boolean;
  onSubmit: (name: string) => void;
  onCancel?: () => void;
}) {
  const [value, setValue] = useState(initial);
  return (
    <form
      class="inline-form"
      onKeyDown={(event) => event.key === 'Escape' && onCancel?.()}
      onSubmit={(event) => {
        event.preventDefault();
        if (value.trim()) onSubmit(value.trim());
      }}
    >
      <input
        type="text"
        aria-label={label}
        value={value}
        required
        maxLength={255}
        onInput={(event) => setValue(event.currentTarget.value)}
        ref={(element) => element?.focus()}
      />
      <button type="submit" disabled={busy}>
        {submit}
      </button>
      {onCancel ? (
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </form>
  );
}

function MoveForm({
  name,
  targets,
  busy,
  onSubmit,
  onCancel,
}: {
  name: string;
  targets: { id: string; name: string }[];
  busy: boolean;
  onSubmit: (target: string) => void;
  onCancel: () => void;
}) {
  const [target, setTarget] = useState(targets[0]?.id ?? '');
  // Opened by "Move": the choice of folder is what comes next.
  const select = useRef<HTMLSelectElement>(null);
  useEffect(() => select.current?.focus(), []);
  return (
    <form
      class="inline-form"
      onKeyDown={(event) => event.key === 'Escape' && onCancel()}
      onSubmit={(event) => {
        event.preventDefault();
        if (target) onSubmit(target);
      }}
    >
      <select aria-label={`Move ${name} to`} value={target} onChange={(event) => setTarget(event.currentTarget.value)} ref={select}>
        {targets.map((option) => (
          <option key={option.id} value={option.id}>
            {option.name}
          </option>
        ))}
      </select>
      <button type="submit" disabled={busy}>
        Move here
      </button>
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

/** New markup from a URL, from files (with upload progress), and a new folder. */
function CreateControls({
  token,
  workspace,
  folderId,
  folderName,
  onCreated,
  onError,
}: BrowserProps & { onCreated: () => void; onError: (failure: unknown, fallback: string) => void }) {
  const [url, setUrl] = useState('');
  const [busy, setBusy] = useState<string>();
  const [uploads, setUploads] = useState<{ name: string; fraction: number }[]>([]);
  const [done, setDone] = useState<string>();
  const label = folderName ?? workspace.name;

  const finish = (message: string) => {
    setDone(message);
    onCreated();
  };

  const fromUrl = async (event: Event) => {
    event.preventDefault();
    setBusy('url');
    setDone(undefined);
    try {
      const markup = await createFromUrl(token, { url: url.trim(), workspaceId: workspace.id, parentFolderId: folderId });
      setUrl('');
      finish(`Created ${markup.name}.`);
    } catch (failure) {
      onError(failure, 'Creating the markup failed.');
    } finally {
      setBusy(undefined);
    }
  };

  const fromFiles = async (event: Event) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('files') as HTMLInputElement;
    const files = [...(input.files ?? [])];
    if (files.length === 0) return;
    setBusy('files');
    setDone(undefined);
    setUploads(files.map((file) => ({ name: file.name, fraction: 0 })));
    try {
      const made: string[] = [];
      for (const group of markupGroups(files)) {
        const fileIds = await Promise.all(
          group.map((file) =>
            uploadFile(token, folderId, file, (fraction) =>
              setUploads((current) => current.map((upload) => (upload.name === file.name ? { ...upload, fraction } : upload))),
            ),
          ),
        );
        made.push((await createFromFiles(token, { workspaceId: workspace.id, parentFolderId: folderId, fileIds })).name);
      }
      input.value = '';
      finish(`Created ${made.join(', ')}.`);
    } catch (failure) {
      onError(failure, 'Uploading failed.');
    } finally {
      setBusy(undefined);
      setUploads([]);
    }
  };

  return (
    <div class="create-controls">
      <form class="inline-form" aria-label={`New markup from a webpage in ${label}`} onSubmit={fromUrl}>
        <input
          type="url"
          aria-label="Webpage URL"
          placeholder="https://example.com/"
          required
          value={url}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy === 'url'}>
          Add webpage
        </button>
      </form>
      <form class="inline-form" aria-label={`New markup from files in ${label}`} onSubmit={fromFiles}>
        <input
          type="file"
          name="files"
          aria-label="Files to upload"
          multiple
          required
          accept="image/*,application/pdf,video/*,.tif,.tiff,.psd,.eps"
        />
        <button type="submit" disabled={busy === 'files'}>
          Upload files
        </button>
      </form>
      <NewFolder token={token} folderId={folderId} onCreated={() => finish('Folder created.')} onError={onError} />
      {uploads.map((upload) => (
        <div class="upload" key={upload.name}>
          <label>
            {upload.name}
            <progress max={1} value={upload.fraction} aria-label={`Uploading ${upload.name}`} />
          </label>
        </div>
      ))}
      {done ? (
        <p class="message message-success" role="status">
          {done}
        </p>
      ) : null}
    </div>
  );
}

function NewFolder({
  token,
  folderId,
  onCreated,
  onError,
}: {
  token: string;
  folderId: string;
  onCreated: () => void;
  onError: (failure: unknown, fallback: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!open) {
    return (
      <button type="button" class="secondary" onClick={() => setOpen(true)}>
        New folder
      </button>
    );
  }
  return (
    <NameForm
      label="Folder name"
      initial=""
      submit="Create folder"
      busy={busy}
      onCancel={() => setOpen(false)}
      onSubmit={(name) => {
        setBusy(true);
        createFolder(token, folderId, name)
          .then(() => {
            setOpen(false);
            onCreated();
          })
          .catch((failure: unknown) => onError(failure, 'Creating the folder failed.'))
          .finally(() => setBusy(false));
      }}
    />
  );
}
