import { GetCommand } from '@aws-sdk/lib-dynamodb';
import sharp from 'sharp';
import { expect } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { reservationKey } from '../../shared/db/reservations.js';
import { STORAGE_CATEGORIES, storageKey } from '../../shared/db/storage.js';
import { put, transact } from '../../shared/db/core/transact.js';
import { uploadKey } from '../../shared/db/uploads.js';
import { call, localStack } from './api.js';

/** A real PNG of the given size and colour. */
export function pngBytes(width = 4, height = 3, background = { r: 200, g: 30, b: 60 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
}

export function jpegBytes(width = 5, height = 2): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 10, g: 120, b: 250 } } })
    .jpeg()
    .toBuffer();
}

export function tiffBytes(width = 3, height = 3): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 } } })
    .tiff()
    .toBuffer();
}

/** A minimal one-page PDF, written by hand (cross-reference offsets computed). */
export function pdfBytes(text = 'Hello'): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${`BT /F1 18 Tf 20 40 Td (${text}) Tj ET`.length} >>\nstream\nBT /F1 18 Tf 20 40 Td (${text}) Tj ET\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** Any bytes: creation never looks inside a video (conversion does). */
export function videoBytes(length = 64): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 31 + 7) % 256));
}

export interface PolicyAnswer {
  fileId: string;
  key: string;
  bucket: string;
  acl: string;
  policy: { url: string; fields: Record<string, string> };
  directPut: { method: 'PUT'; url: string; headers: Record<string, string> };
  metadata: Record<string, string | number>;
}

export interface FileSpec {
  bytes: Buffer;
  filename: string;
  contentType: string;
  resourceType?: string;
  /** Default: the workspace root folder (markup_asset). */
  resourceId?: string;
}

export async function rootFolderOf(key: string, workspaceId?: string): Promise<string> {
  const response = await call('GET', '/workspace', { key, query: { workspaceId } });
  expect(response.status).toBe(200);
  return response.body.data.rootFolderId as string;
}

/** POST /uploads/upload-policy (or the short form with `path`). */
export function requestPolicy(key: string, body: Record<string, unknown>, path = '/uploads/upload-policy') {
  return call<{ data: PolicyAnswer; [problemField: string]: any }>('POST', path, { key, body });
}

/**
 * The storage form post as a browser sends it: every policy field, in order, then `file` last.
 * `fields` replaces or (with undefined) drops fields.
 */
export async function postToStorage(
  policy: PolicyAnswer['policy'],
  bytes: Buffer,
  options: { filename?: string; fields?: Record<string, string | undefined>; after?: Record<string, string> } = {},
) {
  const form = new FormData();
  const fields: Record<string, string | undefined> = { ...policy.fields, ...options.fields };
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, value);
  form.append('file', new Blob([bytes]), options.filename ?? 'file.bin');
  for (const [name, value] of Object.entries(options.after ?? {})) form.append(name, value);
  const response = await fetch(policy.url, { method: 'POST', body: form });
  return { status: response.status, etag: response.headers.get('etag'), text: await response.text() };
}

export function completeUpload(key: string, fileId: string, etag: string, path = '/uploads/upload-complete') {
  return call('POST', path, { key, body: { fileId, etag } });
}

/** The upload record as stored (tests look at state, TTL and what the notification wrote). */
export async function readUploadRecord(fileId: string): Promise<Record<string, unknown> | undefined> {
  localStack();
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: uploadKey(fileId), ConsistentRead: true }));
  return result.Item;
}

/** Waits until the S3 notification has recorded the object (upload-confirmed ran). */
export async function waitForLanded(fileId: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await readUploadRecord(fileId))?.landedAt) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`upload ${fileId} never landed`);
}

/** Policy, post and (unless `confirm: false`) complete: a file ready for POST /markups/from-files. */
export async function uploadFile(key: string, file: FileSpec, options: { confirm?: boolean; workspaceId?: string } = {}) {
  const resourceId = file.resourceId ?? (await rootFolderOf(key, options.workspaceId));
  const policy = await requestPolicy(key, {
    resourceType: file.resourceType ?? 'markup_asset',
    resourceId,
    filename: file.filename,
    contentType: file.contentType,
    filesize: file.bytes.length,
  });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const posted = await postToStorage(policy.body.data.policy, file.bytes, { filename: file.filename });
  expect(posted.status, posted.text).toBe(204);
  const fileId = policy.body.data.fileId;
  if (options.confirm === false) return { fileId, etag: posted.etag!, policy: policy.body.data };
  const completed = await completeUpload(key, fileId, posted.etag!);
  expect(completed.status, JSON.stringify(completed.body)).toBe(200);
  return { fileId, etag: posted.etag!, policy: policy.body.data, completed: completed.body.data as Record<string, unknown> };
}

/** A multipart body for POST /markups/file. */
export function fileForm(bytes: Buffer, filename: string, contentType: string, extra: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(extra)) form.append(name, value);
  form.append('file', new Blob([bytes], { type: contentType }), filename);
  return form;
}

/** POST /markups/file as a client sends it (fetch sets the multipart boundary). */
export async function postFileMarkup(
  key: string,
  form: FormData | string,
  query: Record<string, string | undefined>,
  headers: Record<string, string> = {},
) {
  const { stack } = localStack();
  const url = new URL('/api/v2/markups/file', stack.baseUrl);
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
  const response = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Service-API-Version': '2023-02-22', ...headers },
    body: form,
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text,
  };
}

/** The organization's storage counters as stored, with what is reserved for uploads in progress and the claimed sum. */
export async function storageCounters(organizationId: string): Promise<{ total: number; reserved: number; claimed: number }> {
  localStack();
  const item =
    (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: storageKey(organizationId), ConsistentRead: true })))
      .Item ?? {};
  const total = STORAGE_CATEGORIES.reduce((sum, category) => sum + Number(item[category] ?? 0), 0);
  return { total, reserved: Number(item.reserved ?? 0), claimed: Number(item.claimed ?? total) };
}

/** Moves an issued upload, and its reservation, a minute into the past: as if its policy expired unconfirmed. */
export async function expireUpload(fileId: string): Promise<void> {
  const record = await readUploadRecord(fileId);
  if (!record) throw new Error(`no upload ${fileId}`);
  const past = Math.floor(Date.now() / 1000) - 60;
  const reservation = {
    organizationId: record.organizationId as string,
    fileId,
    untilEpoch: (record.reservedUntilEpoch ?? record.expiresAtEpoch) as number,
  };
  const stored = (
    await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: reservationKey(reservation), ConsistentRead: true }))
  ).Item;
  await transact([
    put({ ...record, expiresAtEpoch: past, ...(record.reservedUntilEpoch === undefined ? {} : { reservedUntilEpoch: past }) }),
    ...(stored
      ? [
          { Delete: { TableName: getConfig().tableName, Key: reservationKey(reservation) } },
          put({ ...stored, ...reservationKey({ ...reservation, untilEpoch: past }), untilEpoch: past }),
        ]
      : []),
  ]);
}
