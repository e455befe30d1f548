import { getConfig } from '../../config.js';
import { getAppUrlSetting } from '../../db/app-url-setting.js';

/** After a read that found no setting (or failed), how long links use the request's origin before the next read. */
const RETRY_AFTER_MS = 60_000;

let cache: { value: string | undefined; until: number } | undefined;

/**
 * The review app's origin, for `markupUrl` and email links: `APP_URL` (CDK context `appUrl`, or the
 * local stack's gateway), else, where the deployment says so (`APP_URL_FROM_TABLE`), the origin the
 * web stack wrote into the table, read once per cold start; else undefined, and callers link to the
 * API's own origin as before. A failed read never fails the request: it links to the origin.
 */
export async function resolveAppUrl(): Promise<string | undefined> {
  const config = getConfig();
  if (config.appUrl || !config.appUrlFromTable) return config.appUrl;
  const now = Date.now();
  if (cache && cache.until > now) return cache.value;
  const value = await getAppUrlSetting().catch(() => undefined);
  cache = { value, until: value ? Number.POSITIVE_INFINITY : now + RETRY_AFTER_MS };
  return value;
}

/** Forgets the cached origin (tests). */
export function resetAppUrlCache(): void {
  cache = undefined;
}
