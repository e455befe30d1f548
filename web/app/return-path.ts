/**
 * Where the app may send a reviewer after sign-in: a path of this app (`/markups/…?x`), never
 * another origin (`//evil.example`, `/\evil.example`, `https://…`, `javascript:`), never the
 * sign-in page itself. No DOM here: unit tests import it.
 */
export function isReturnPath(path: unknown): path is string {
  return typeof path === 'string' && path.length <= 2048 && /^\/(?![/\\])[^\s]*$/.test(path) && !/^\/sign-in(?:[/?#]|$)/.test(path);
}
