import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { getS3 } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { call, localStack, makeOrganization, type Org } from '../support/api.js';
import { addMember } from '../support/conversations.js';
import { endUserToken } from '../support/end-users.js';
import { createThread, makeTypedMarkup } from '../support/threads.js';
import { fileForm, pdfBytes, pngBytes, postFileMarkup, postToStorage, requestPolicy, uploadFile, videoBytes } from '../support/uploads.js';

/**
 * DESIGN.md, "Files are served so they cannot script" (issue 28, item 3): every URL the API hands
 * out serves raster images, PDF and video inline, and every other type as a download with
 * `X-Content-Type-Options: nosniff`, whatever type the uploader declared. Checked through the
 * gateway and the local S3 front, with the URLs the API answers.
 */

const HTML = Buffer.from('<!doctype html><script>parent.postMessage(document.cookie, "*")</script>');
const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="3"><script>alert(document.domain)</script><rect width="4" height="3"/></svg>',
);

/** Types a browser would run script from, or could be talked into reading as such. */
const DANGEROUS: { contentType: string; filename: string; bytes: Buffer }[] = [
  { contentType: 'text/html', filename: 'page.html', bytes: HTML },
  { contentType: 'text/html; charset=utf-7', filename: 'page.html', bytes: Buffer.from('+ADw-script+AD4-alert(1)+ADw-/script+AD4-') },
  { contentType: 'TEXT/HTML', filename: 'upper.htm', bytes: HTML },
  { contentType: 'image/svg+xml', filename: 'drawing.svg', bytes: SVG },
  {
    contentType: 'application/xhtml+xml',
    filename: 'page.xhtml',
    bytes: Buffer.from('<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'),
  },
  { contentType: 'application/xml', filename: 'data.xml', bytes: Buffer.from('<?xml version="1.0"?><x/>') },
  { contentType: 'text/javascript', filename: 'app.js', bytes: Buffer.from('alert(1)') },
  { contentType: 'text/plain', filename: 'notes.txt', bytes: HTML },
  { contentType: 'application/x-made-up', filename: 'blob.bin', bytes: HTML },
];

/** What a browser gets from a URL the API handed out. */
async function served(url: string) {
  const response = await fetch(url);
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    disposition: response.headers.get('content-disposition'),
    nosniff: response.headers.get('x-content-type-options'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** The Content-Disposition and Content-Type storage keeps with the object. */
async function storedHeadersOf(key: string) {
  localStack();
  const head = await getS3().send(new HeadObjectCommand({ Bucket: getConfig().bucketName, Key: key }));
  return { disposition: head.ContentDisposition, contentType: head.ContentType };
}

/** The object key of a presigned URL of the local (path-style) bucket. */
const keyOfUrl = (url: string) => decodeURIComponent(new URL(url).pathname).split('/').slice(2).join('/');

/** An organization with a webpage markup, and a contributor end user (an exchange token) on it. */
async function contributorEndUser(): Promise<{ org: Org; token: string; markupId: string; threadId: string }> {
  const org = await makeOrganization();
  const markup = await makeTypedMarkup(org, 'webpage');
  const token = await endUserToken({ organizationId: org.organizationId, workspaceId: org.workspaceId, markupRole: 'project:contributor' });
  const thread = await createThread(token, markup);
  return { org, token, markupId: markup.id, threadId: thread.id as string };
}

/** A message attachment as the end user sends it: upload, then a reply that attaches it; answers the attachment. */
async function attach(token: string, markupId: string, threadId: string, file: { contentType: string; filename: string; bytes: Buffer }) {
  const upload = await uploadFile(token, { ...file, resourceType: 'message_attachment', resourceId: markupId });
  const message = await call('POST', `/threads/${threadId}/messages`, {
    key: token,
    body: { content: 'see attached', attachments: [{ fileId: upload.fileId }] },
  });
  expect(message.status, JSON.stringify(message.body)).toBe(200);
  return message.body.data.attachments[0] as { url: string; mimeType: string; originalFilename: string };
}

describe('uploads an end user attaches to a message are served so they cannot script', () => {
  it.each(DANGEROUS)('serves a $contentType attachment as a nosniff download of its exact bytes', async (file) => {
    const { token, markupId, threadId } = await contributorEndUser();

    const attachment = await attach(token, markupId, threadId, file);
    const answer = await served(attachment.url);

    expect(answer.status).toBe(200);
    expect(answer.disposition).toMatch(/^attachment\b/);
    expect(answer.disposition).toContain(`filename*=UTF-8''${encodeURIComponent(file.filename)}`);
    expect(answer.nosniff).toBe('nosniff');
    expect(answer.contentType).toBe(file.contentType === 'image/svg+xml' ? 'image/svg+xml' : 'application/octet-stream');
    expect(answer.bytes).toEqual(file.bytes);
    expect(attachment.mimeType).toBe(file.contentType);
  });

  it('serves PNG, PDF and video attachments inline, as their type, still nosniff', async () => {
    const { token, markupId, threadId } = await contributorEndUser();
    const files = [
      { contentType: 'image/png', filename: 'shot.png', bytes: await pngBytes() },
      { contentType: 'Application/PDF; name=x.html', filename: 'report.pdf', bytes: pdfBytes() },
      { contentType: 'video/mp4', filename: 'clip.mp4', bytes: videoBytes() },
    ];

    const answers = await Promise.all(files.map(async (file) => served((await attach(token, markupId, threadId, file)).url)));

    expect(answers.map(({ status, contentType, disposition, nosniff }) => ({ status, contentType, disposition, nosniff }))).toEqual([
      { status: 200, contentType: 'image/png', disposition: 'inline', nosniff: 'nosniff' },
      { status: 200, contentType: 'application/pdf', disposition: 'inline', nosniff: 'nosniff' },
      { status: 200, contentType: 'video/mp4', disposition: 'inline', nosniff: 'nosniff' },
    ]);
    expect(answers.map((answer) => answer.bytes)).toEqual(files.map((file) => file.bytes));
  });
});

describe('the serving a URL signs cannot be taken off it', () => {
  it.each(['response-content-disposition', 'response-content-type'])(
    'refuses the URL of an HTML attachment with its %s removed or changed (403)',
    async (parameter) => {
      const { token, markupId, threadId } = await contributorEndUser();
      const attachment = await attach(token, markupId, threadId, DANGEROUS[0]!);
      const stripped = new URL(attachment.url);
      stripped.searchParams.delete(parameter);
      const changed = new URL(attachment.url);
      changed.searchParams.set(parameter, parameter === 'response-content-type' ? 'text/html' : 'inline');

      const answers = await Promise.all([stripped, changed].map(async (url) => (await served(url.href)).status));

      expect(answers).toEqual([403, 403]);
    },
  );
});

describe('uploads are stored so a GET that names no disposition downloads them too', () => {
  it('stores an HTML attachment with Content-Disposition: attachment, by form post and by direct PUT, and a PNG without', async () => {
    const { token, markupId } = await contributorEndUser();
    const policyFor = async (contentType: string, bytes: Buffer) => {
      const policy = await requestPolicy(token, {
        resourceType: 'message_attachment',
        resourceId: markupId,
        filename: 'f',
        contentType,
        filesize: bytes.length,
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(200);
      return policy.body.data;
    };
    const png = await pngBytes();
    const [posted, put, image] = await Promise.all([
      policyFor('text/html', HTML),
      policyFor('text/html; charset=utf-7', HTML),
      policyFor('image/png', png),
    ]);

    expect((await postToStorage(posted.policy, HTML)).status).toBe(204);
    expect((await fetch(put.directPut.url, { method: 'PUT', headers: put.directPut.headers, body: HTML })).status).toBe(200);
    expect((await postToStorage(image.policy, png)).status).toBe(204);
    const withoutDisposition = await postToStorage(posted.policy, HTML, { fields: { 'Content-Disposition': undefined } });
    const inlineDisposition = await postToStorage(posted.policy, HTML, { fields: { 'Content-Disposition': 'inline' } });

    expect(await storedHeadersOf(posted.key)).toEqual({ disposition: 'attachment', contentType: 'text/html' });
    expect(await storedHeadersOf(put.key)).toEqual({ disposition: 'attachment', contentType: 'text/html; charset=utf-7' });
    expect(await storedHeadersOf(image.key)).toEqual({ disposition: undefined, contentType: 'image/png' });
    expect([withoutDisposition.status, inlineDisposition.status]).toEqual([403, 403]);
  });
});

describe('an SVG image markup keeps its bytes and type but is served as a download (MarkupImage rule 1)', () => {
  it('serves the SVG page of a from-files markup, and its thumbnail, as nosniff attachments of type image/svg+xml', async () => {
    const org = await makeOrganization();
    const contributor = await addMember(org.workspaceId, 'contributor');
    const upload = await uploadFile(contributor.key, { bytes: SVG, filename: 'drawing.svg', contentType: 'image/svg+xml; charset=utf-7' });

    const created = await call('POST', '/markups/from-files', {
      key: contributor.key,
      body: { workspaceId: org.workspaceId, fileIds: [upload.fileId] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const [image, thumbnail] = await Promise.all([served(created.body.data.images[0].url), served(created.body.data.thumbnailUrl)]);

    expect(created.body.data.images[0].mimeType).toBe('image/svg+xml');
    for (const answer of [image, thumbnail]) {
      expect(answer).toMatchObject({ status: 200, contentType: 'image/svg+xml', nosniff: 'nosniff' });
      expect(answer.disposition).toMatch(/^attachment\b/);
      expect(answer.bytes).toEqual(SVG);
    }
  });

  it('serves the SVG of a multipart-created markup the same way, and a PNG markup inline', async () => {
    const org = await makeOrganization();
    const contributor = await addMember(org.workspaceId, 'contributor');
    const png = await pngBytes();

    const svgMarkup = await postFileMarkup(contributor.key, fileForm(SVG, 'drawing.svg', 'image/svg+xml'), {
      workspaceId: org.workspaceId,
    });
    const pngMarkup = await postFileMarkup(contributor.key, fileForm(png, 'shot.png', 'image/png'), { workspaceId: org.workspaceId });
    expect(svgMarkup.status, JSON.stringify(svgMarkup.body)).toBe(200);
    expect(pngMarkup.status, JSON.stringify(pngMarkup.body)).toBe(200);
    const [svgAnswer, pngAnswer] = await Promise.all([
      served(svgMarkup.body.data.images[0].url),
      served(pngMarkup.body.data.images[0].url),
    ]);

    expect(svgAnswer).toMatchObject({ status: 200, contentType: 'image/svg+xml', nosniff: 'nosniff', bytes: SVG });
    expect(svgAnswer.disposition).toMatch(/^attachment\b/);
    expect(pngAnswer).toMatchObject({ status: 200, contentType: 'image/png', disposition: 'inline', nosniff: 'nosniff', bytes: png });
    expect(await storedHeadersOf(keyOfUrl(svgMarkup.body.data.images[0].url))).toEqual({
      disposition: 'attachment',
      contentType: 'image/svg+xml',
    });
    expect(await storedHeadersOf(keyOfUrl(pngMarkup.body.data.images[0].url))).toEqual({
      disposition: undefined,
      contentType: 'image/png',
    });
  });
});

describe('an SVG screenshot an end user attaches to its thread is served as a download', () => {
  it('serves the screenshot URL as a nosniff attachment', async () => {
    const { token, threadId } = await contributorEndUser();
    const policy = await call('GET', `/threads/${threadId}/screenshot-upload-policy`, {
      key: token,
      query: { filename: 'shot.svg', mimeType: 'image/svg+xml', filesize: SVG.length },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const posted = await postToStorage(policy.body.data.policy, SVG, { filename: 'shot.svg' });
    expect(posted.status, posted.text).toBe(204);

    const attached = await call('PUT', `/threads/${threadId}/screenshot`, {
      key: token,
      body: {
        fileId: String(policy.body.data.metadata.fileId),
        key: policy.body.data.key,
        etag: posted.etag,
        mimeType: 'image/svg+xml',
        filesize: SVG.length,
        width: 4,
        height: 3,
      },
    });
    expect(attached.status, JSON.stringify(attached.body)).toBe(200);
    const answer = await served(attached.body.data.url);

    expect(answer).toMatchObject({ status: 200, contentType: 'image/svg+xml', nosniff: 'nosniff', bytes: SVG });
    expect(answer.disposition).toMatch(/^attachment\b/);
  });
});
