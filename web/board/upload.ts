import type { Request } from './transport.js';

/**
 * The presigned upload flow (docs/api-files.md "Uploads"), the one way the review app and the board
 * send files: POST /uploads/upload-policy for the resource, the form POST to storage with every
 * policy field and the file last (XMLHttpRequest, for its upload progress), then POST
 * /uploads/upload-complete with storage's ETag. Answers the file id the resource is then created
 * with (`fileIds` of POST /markups/from-files, `attachments` of a message).
 */
export interface UploadTarget {
  /** `markup_asset` (resourceId: the folder), `message_attachment` (resourceId: the markup), … */
  resourceType: string;
  resourceId: string;
}

/** Storage refused the form POST, or could not be reached (status 0); `message` is what to show. */
export class StorageRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface UploadPolicy {
  fileId: string;
  policy: { url: string; fields: Record<string, string> };
}

export async function uploadThroughPolicy(
  request: Request,
  target: UploadTarget,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<string> {
  const contentType = file.type || 'application/octet-stream';
  const { fileId, policy } = await request<UploadPolicy>('/uploads/upload-policy', {
    method: 'POST',
    body: { ...target, filename: file.name, contentType, filesize: file.size },
  });
  const form = new FormData();
  for (const [name, value] of Object.entries(policy.fields)) form.append(name, value);
  form.append('file', file);
  const etag = await postForm(policy.url, form, onProgress);
  await request('/uploads/upload-complete', { method: 'POST', body: { fileId, etag } });
  return fileId;
}

/**
 * The part of the browser's XMLHttpRequest used here, declared so this module also type-checks in
 * the Node project that unit-tests the board's store (no DOM library there); it is the browser's.
 */
interface FormRequest {
  open(method: 'POST', url: string): void;
  upload: { onprogress: ((event: { lengthComputable: boolean; loaded: number; total: number }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  readonly status: number;
  readonly responseText: string;
  getResponseHeader(name: string): string | null;
  send(body: FormData): void;
}
declare const XMLHttpRequest: new () => FormRequest;

/** The form POST to storage of a presigned policy; answers storage's ETag. */
export function postForm(url: string, form: FormData, onProgress: (fraction: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      const etag = request.getResponseHeader('ETag');
      if (request.status >= 200 && request.status < 300 && etag) {
        onProgress(1);
        resolve(etag);
        return;
      }
      // Storage answers S3's XML errors: its <Message> is the detail.
      const message = /<Message>([^<]*)<\/Message>/.exec(request.responseText ?? '')?.[1];
      reject(
        new StorageRefusal(
          request.status,
          message ? `Storage refused the upload: ${message}` : `Storage refused the upload (status ${request.status}).`,
        ),
      );
    };
    request.onerror = () => reject(new StorageRefusal(0, 'The upload could not reach storage. Check your connection and try again.'));
    request.send(form);
  });
}
