/**
 * The browser origins an installation admits: the SDK exchange checks `sdkOrigin` against them, and
 * the origin index (CORS, `shared/db/allowed-origins.ts`) counts them while the installation lives.
 *
 * `allowedOrigins` omitted (null) falls back to the SDK exchange defaults (spec, Installations): the
 * origin of the page the installation was created for (its `url`), where the embedded client is
 * expected to run; an installation with neither admits no browser origin, so nothing is open by
 * default. Both the creation and the deletion of an installation pass this same list.
 */
export function installationOrigins(installation: { allowedOrigins: readonly string[] | null; url?: string | null }): string[] {
  if (installation.allowedOrigins) return [...new Set(installation.allowedOrigins)];
  if (!installation.url) return [];
  try {
    const { protocol, origin } = new URL(installation.url);
    return protocol === 'http:' || protocol === 'https:' ? [origin] : [];
  } catch {
    return [];
  }
}
