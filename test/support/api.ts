import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, inject, type ProvidedContext } from 'vitest';
import { startLocalStack, useLocalServices, type LocalStack } from '../../infra/local/stack.js';
import { createOrganization } from '../../shared/domain/organizations/organizations.js';

export const VERSION = '2023-02-22';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** The stack of a file that runs on one of its own (`useOwnLocalStack`), once it has started. */
let own: ProvidedContext['localStack'] | undefined;

/** The local stack this file's tests call: the run's, or the file's own (`useOwnLocalStack`). */
export const currentStack = (): ProvidedContext['localStack'] => own ?? inject('localStack');

/** The running local stack of this test run; also points this worker's AWS clients at its emulators. */
export function localStack() {
  const provided = currentStack();
  useLocalServices(provided.services);
  return provided;
}

/**
 * Runs this file on a local stack of its own (DynamoDB Local, queues, storage and a gateway, in this
 * worker), from its first hook to its end: `localStack`, `call` and the helpers built on them use it.
 * For a file whose commands read the whole table (an operator's Scan, `threads backfill` without
 * `--markup`): on the run's table they would read what every other file wrote (minutes, late in a
 * full run), touch other files' data, and hold DynamoDB Local from the files running beside them.
 * Call it at the top of the file, before any hook; `dataDir` is the stack's DATA_DIR (for the admin
 * CLI, which must run with `runAdminAsync`: this worker's event loop serves the stack).
 */
export function useOwnLocalStack(): { dataDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'review-board-own-stack-'));
  let started: LocalStack | undefined;
  beforeAll(async () => {
    started = await startLocalStack({ port: 0, dataDir, memory: true });
    own = { stack: started.stack, services: started.services, dataDir };
  }, 120_000);
  afterAll(async () => {
    own = undefined;
    await started?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { dataDir };
}

export interface RequestOptions {
  key?: string | null;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** Calls the API over HTTP through the local gateway, as a user would. */
export async function call<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const { stack } = currentStack();
  const url = new URL(`/api/v2${path}`, stack.baseUrl);
  for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { 'Service-API-Version': VERSION, ...options.headers };
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body }).catch((error: unknown) => {
    // A keep-alive socket the gateway closed while this worker's event loop was blocked (a test that
    // ran the admin CLI with spawnSync for longer than the gateway's 30 s keep-alive): the closing was
    // never read, the request went into a dead socket and reached no handler. Once more, on a new one.
    if ((error as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw error;
    return fetch(url, { method, headers, body });
  });
  const text = await response.text();
  let parsed: unknown = text;
  if (text && /json/.test(response.headers.get('content-type') ?? '')) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** A fresh organization with its default workspace and both kinds of key, isolated from other tests. */
export async function makeOrganization(name?: string) {
  localStack();
  return await newOrganization(name);
}

/** `makeOrganization` on whichever stack this process is pointed at (the run's, or a file's own local stack). */
export async function newOrganization(name = `Org ${Math.random().toString(36).slice(2, 8)}`) {
  const created = await createOrganization(name);
  return {
    organizationId: created.organizationId,
    workspaceId: created.workspaceId,
    orgKey: created.organizationApiKey.apiKey,
    workspaceKey: created.workspaceApiKey.apiKey,
    workspaceKeyUserId: created.workspaceApiKey.userId,
  };
}

/** What `makeOrganization` returns: ids and keys of a fresh organization. */
export type Org = Awaited<ReturnType<typeof makeOrganization>>;
