import { readFile } from 'node:fs/promises';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Reply } from './route.js';

/**
 * A file a function reads at run time instead of importing it, so its bundle stays small and its
 * cold import never parses it: the CDK construct copies `source` (relative to the repository root)
 * next to the bundle as `name` (`FunctionBase.files` in functions/registry.ts); run from the
 * sources (the local stack, tests), it is read where it is.
 */
export interface ShippedFile {
  /** The file's name next to the deployed bundle. */
  name: string;
  /** Where it is in the repository (an installed package's file included). */
  source: string;
}

const loaded = new Map<string, Promise<{ data: Buffer; gzipped: Promise<Buffer> }>>();

async function load(file: ShippedFile): Promise<{ data: Buffer; gzipped: Promise<Buffer> }> {
  // Next to the bundle when deployed (this module is inlined into index.mjs); else from the sources.
  const candidates = [new URL(`./${file.name}`, import.meta.url), new URL(`../../${file.source}`, import.meta.url)];
  for (const candidate of candidates) {
    try {
      const data = await readFile(candidate);
      // Compressed once per container, on first use: the API reference's script shrinks about 4x.
      const gzipped = promisify(gzip)(data);
      gzipped.catch(() => undefined);
      return { data, gzipped };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error(`${file.name} is neither next to the bundle nor at ${file.source}: was it declared in the function's files?`);
}

/** The file's bytes, read once per container. */
export function readShippedFile(file: ShippedFile): Promise<Buffer> {
  return readOnce(file).then(({ data }) => data);
}

function readOnce(file: ShippedFile) {
  let entry = loaded.get(file.name);
  if (!entry) {
    entry = load(file);
    entry.catch(() => loaded.delete(file.name));
    loaded.set(file.name, entry);
  }
  return entry;
}

/**
 * A reply with the file as its body, gzip-encoded when the caller accepts it (every browser does):
 * a Lambda response carries at most 6 MB, base64 included, and the reference's script alone is 4 MB.
 */
export async function shippedFileReply(
  file: ShippedFile,
  contentType: string,
  acceptEncoding: string | undefined,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const { data, gzipped } = await readOnce(file);
  const gzipOk = /\bgzip\b/i.test(acceptEncoding ?? '');
  return {
    status: 200,
    binary: { data: gzipOk ? await gzipped : data, contentType },
    headers: { ...headers, Vary: 'Accept-Encoding', ...(gzipOk ? { 'Content-Encoding': 'gzip' } : {}) },
  };
}
