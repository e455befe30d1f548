import { useEffect, useState } from 'preact/hooks';

/** The app's paths (DESIGN.md: `markupUrl` is `${appUrl}/markups/{id}`, sign-in at `/sign-in`). */
export type Route =
  | { name: 'home' }
  | { name: 'sign-in'; code?: string }
  | { name: 'markup'; id: string }
  | { name: 'folder'; workspaceId: string; folderId: string }
  | { name: 'not-found'; path: string };

export function parseRoute(location: { pathname: string; search: string }): Route {
  const path = location.pathname.replace(/\/+$/, '') || '/';
  if (path === '/') return { name: 'home' };
  if (path === '/sign-in') {
    const code = new URLSearchParams(location.search).get('code') ?? undefined;
    return code ? { name: 'sign-in', code } : { name: 'sign-in' };
  }
  const markup = /^\/markups\/([^/]+)$/.exec(path);
  if (markup) return { name: 'markup', id: decodeURIComponent(markup[1]!) };
  const folder = /^\/workspaces\/([^/]+)\/folders\/([^/]+)$/.exec(path);
  if (folder) return { name: 'folder', workspaceId: decodeURIComponent(folder[1]!), folderId: decodeURIComponent(folder[2]!) };
  return { name: 'not-found', path };
}

const listeners = new Set<() => void>();

/** Moves to `path` inside the app without a page load (`replace` for redirects, so Back skips them). */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const listener of listeners) listener();
}

/** The current location, re-read on navigate() and on Back/Forward. */
export function useLocation(): { pathname: string; search: string } {
  const [location, setLocation] = useState(() => ({ pathname: window.location.pathname, search: window.location.search }));
  useEffect(() => {
    const update = () => setLocation({ pathname: window.location.pathname, search: window.location.search });
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return location;
}

/** A plain left click on an app link navigates in place; modified clicks (new tab…) stay the browser's. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor || anchor.target || anchor.origin !== window.location.origin || anchor.hasAttribute('download')) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
