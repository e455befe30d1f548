import { isReturnPath } from './return-path.js';

/**
 * The signed-in session. The token lives in `sessionStorage`: it survives a reload and history
 * navigation in its tab, is never sent by the browser on its own (so no cross-site request can use
 * it), and is gone when the tab closes, so a shared computer keeps no 12-hour credential behind.
 * Memory alone would sign the reviewer out on every reload. (Scripts of this origin could read it
 * either way; the Content-Security-Policy admits no script but the app's own files.)
 *
 * Where to go back after signing in is kept in `localStorage`, because the emailed link usually
 * opens in a new tab: it is a path inside the app, nothing secret, and it is checked to be one.
 */
export interface SessionUser {
  id: string;
  email: string;
  name?: string | null;
}

export interface Session {
  sessionToken: string;
  expiresAt: string;
  user: SessionUser;
}

const SESSION_KEY = 'review-board.session';
const RETURN_KEY = 'review-board.return-to';

export function loadSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(SESSION_KEY);
    if (!raw) return undefined;
    const session = JSON.parse(raw) as Session;
    if (typeof session.sessionToken !== 'string' || Date.parse(session.expiresAt) <= Date.now()) {
      sessionStorage.removeItem(SESSION_KEY);
      return undefined;
    }
    return session;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(SESSION_KEY);
}

export function rememberReturnTo(path: string): void {
  if (isReturnPath(path)) localStorage.setItem(RETURN_KEY, path);
}

/** Where to go after signing in (and forgets it): the remembered app path, else the landing page. */
export function takeReturnTo(): string {
  const path = localStorage.getItem(RETURN_KEY);
  localStorage.removeItem(RETURN_KEY);
  return isReturnPath(path) ? path : '/';
}
