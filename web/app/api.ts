/**
 * The app's one way to call the API (same origin, `/api/v2`): the version header, the session token
 * as `Authorization: Bearer`, and every failure turned into an `ApiError` whose `detail` is what the
 * screen shows (the problem's `detail`, RFC 9457), never a blank screen.
 */
export const API_BASE = '/api/v2';
const API_VERSION = '2023-02-22';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  body?: unknown;
  token?: string;
}

/** Calls `path` under /api/v2 and answers the envelope's `data` (undefined for a 204). */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', 'service-api-version': API_VERSION };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiError(0, 'The service could not be reached. Check your connection and try again.');
  }
  if (!response.ok) throw new ApiError(response.status, await problemDetail(response));
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  if (!text) return undefined as T;
  try {
    return (JSON.parse(text) as { data: T }).data;
  } catch {
    throw new ApiError(response.status, `The service answered ${response.status} with a body that is not JSON.`);
  }
}

async function problemDetail(response: Response): Promise<string> {
  try {
    const problem = (await response.json()) as { detail?: unknown; title?: unknown; message?: unknown };
    for (const field of [problem.detail, problem.title, problem.message]) {
      if (typeof field === 'string' && field.trim()) return forPeople(field);
    }
  } catch {
    // Not JSON (a proxy's error page): fall through to the status.
  }
  return `The request failed with status ${response.status}${response.statusText ? ` (${response.statusText})` : ''}.`;
}

/**
 * A validation problem names the field by its JSON pointer for programs (`/body/url: must be…`);
 * people read the field's name (`url: must be…`).
 */
export const forPeople = (detail: string): string => detail.replace(/^\/(?:body|params|query|headers)\/(?:[^:\s]*\/)?([^:/\s]+): /, '$1: ');
