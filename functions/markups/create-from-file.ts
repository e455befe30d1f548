import { createMarkupFromBytes } from '../../shared/domain/markups/file-markups.js';
import { INCLUDE_ALL, toPublicMarkup } from '../../shared/domain/markups/view.js';
import { BadRequestError } from '../../shared/errors.js';
import { parseMultipart, type MultipartPart } from '../../shared/http/multipart.js';
import { ok, operation } from '../../shared/http/route.js';
import { parseWith } from '../../shared/http/validation.js';
import { FilePartHeaders } from '../uploads/schemas.js';
import { FileForm, FileMarkupQuery, MarkupSchema } from './schemas.js';

/** The one `file` part of the form, or a 400 saying what is wrong with the form. */
function filePartOf(body: Buffer, contentType: string): MultipartPart & { filename: string } {
  let parts: MultipartPart[];
  try {
    parts = parseMultipart(body, contentType);
  } catch (error) {
    throw new BadRequestError(`The request body is not valid multipart/form-data: ${(error as Error).message}`, 'malformed-multipart');
  }
  const files = parts.filter((part) => part.name === 'file');
  if (files.length !== 1)
    throw new BadRequestError(`The form must have exactly one field named file; it has ${files.length}.`, 'file-field');
  const file = files[0]!;
  if (file.filename === undefined)
    throw new BadRequestError('The file field must be a file part (with a filename in its Content-Disposition).', 'file-field');
  if (file.data.length === 0) throw new BadRequestError('The file is empty.', 'empty-file');
  // The part's headers are the client's input like any field: bounded as the upload flow bounds them.
  const named = parseWith(FilePartHeaders, { filename: file.filename, contentType: file.contentType }, '/body/file');
  return { ...file, ...named };
}

export const createFromFileOperation = operation({
  operationId: 'createMarkupFromFile',
  summary: 'Create a markup from a file',
  description:
    'Creates a markup from one file sent as multipart/form-data: small files; larger ones use the upload flow. ' +
    'One `file` field; the whole request at most 20 MB (413 beyond). The file type decides the markup as in POST /markups/from-files ' +
    "(the part's Content-Type, else the file name's extension). `workspaceId` is the key's workspace (a workspace key may leave it out, an organization key must name it); an image whose " +
    'bytes do not decode as its type is a 400 that creates nothing; `name` defaults ' +
    'to the file name without extension; `parentFolderId` to the workspace root. Deployed, API Gateway HTTP APIs accept at most 10 MB ' +
    'and Lambda 6 MB of request payload, which base64 encoding of binary bodies leaves at about 4.5 MB of file: send larger files ' +
    'through POST /uploads/upload-policy, the storage form post, POST /uploads/upload-complete and POST /markups/from-files.',
  auth: 'apiKey',
  permission: 'markup:create',
  query: FileMarkupQuery,
  rawBody: FileForm,
  responses: [{ status: 200, description: 'The new markup, with its files', schema: MarkupSchema }],
  handle: async ({ principal, query, rawBody, appUrl }) => {
    const file = filePartOf(rawBody!.data, rawBody!.contentType);
    const { record, access } = await createMarkupFromBytes(principal, query, {
      data: file.data,
      filename: file.filename,
      contentType: file.contentType ?? 'application/octet-stream',
    });
    return ok(await toPublicMarkup(record, { role: access.role, plan: access.plan, appUrl, include: INCLUDE_ALL }));
  },
});
