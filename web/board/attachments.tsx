import { useId, useRef } from 'preact/hooks';
import type { BoardStore } from './store.js';
import { sizeOf } from './sizes.js';
import type { Message } from './types.js';

/**
 * Attachments of a reply: the file input "Attach files" uploads each chosen file at once through the
 * presigned flow (`BoardStore.uploadAttachment`), with a progress bar "Uploading NAME" per file;
 * uploaded files are listed with a button "Remove NAME" and go with the reply as `attachments`. A
 * refused upload leaves the store's error (the problem's detail), which the dialog shows.
 */
export interface PendingAttachment {
  /** Unique among the pending files of one reply. */
  key: string;
  name: string;
  /** 0..1 while uploading. */
  progress: number;
  /** Set once storage has the file and the service confirmed it. */
  fileId?: string;
}

export const uploading = (pending: readonly PendingAttachment[]) => pending.some((file) => file.fileId === undefined);
export const uploadedIds = (pending: readonly PendingAttachment[]) => pending.flatMap((file) => (file.fileId ? [file.fileId] : []));

export function AttachmentPicker({
  store,
  pending,
  onChange,
}: {
  store: BoardStore;
  pending: PendingAttachment[];
  /** Called with an updater, as uploads progress in parallel. */
  onChange: (update: (pending: PendingAttachment[]) => PendingAttachment[]) => void;
}) {
  const inputId = useId();
  const counter = useRef(0);
  const choose = (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      counter.current += 1;
      const key = `${counter.current}`;
      onChange((list) => [...list, { key, name: file.name, progress: 0 }]);
      const update = (change: Partial<PendingAttachment>) =>
        onChange((list) => list.map((entry) => (entry.key === key ? { ...entry, ...change } : entry)));
      void store
        .uploadAttachment(file, (progress) => update({ progress }))
        .then((fileId) => {
          if (fileId) update({ fileId, progress: 1 });
          else onChange((list) => list.filter((entry) => entry.key !== key));
        });
    }
  };
  return (
    <div class="attach">
      <label for={inputId}>Attach files</label>
      <input
        id={inputId}
        type="file"
        multiple
        onChange={(event) => {
          const input = event.currentTarget as HTMLInputElement;
          choose(input.files);
          // The same file may be chosen again after it was removed.
          input.value = '';
        }}
      />
      {pending.length ? (
        <ul class="attach-list">
          {pending.map((file) => (
            <li key={file.key}>
              {file.fileId ? (
                <>
                  <span class="attach-name">{file.name}</span>
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Remove ${file.name}`}
                    onClick={() => onChange((list) => list.filter((entry) => entry.key !== file.key))}
                  >
                    Remove
                  </button>
                </>
              ) : (
                <div class="attach-progress">
                  <span class="attach-name">{file.name}</span>
                  <progress aria-label={`Uploading ${file.name}`} max={1} value={file.progress} />
                </div>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

type Attachment = NonNullable<Message['attachments']>[number];

/** A message's attachments: pictures shown small, each a link to the file named by it; other files as links with their size. */
export function AttachmentList({ attachments }: { attachments: Attachment[] }) {
  return (
    <ul class="attachments">
      {attachments.map((attachment) => (
        <li key={attachment.id}>
          {attachment.mimeType.startsWith('image/') ? (
            <a href={attachment.url} target="_blank" rel="noopener noreferrer" class="attachment-image">
              <img src={attachment.url} alt={`Attachment ${attachment.originalFilename}`} loading="lazy" />
            </a>
          ) : (
            <a href={attachment.url} target="_blank" rel="noopener noreferrer" aria-label={`Attachment ${attachment.originalFilename}`}>
              {attachment.originalFilename}
            </a>
          )}{' '}
          <span class="board-note">({sizeOf(attachment.filesize)})</span>
        </li>
      ))}
    </ul>
  );
}
