import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { Loading, ScreenHeading } from './components.js';
import { navigate, onLinkClick, parseRoute, useLocation } from './router.js';
import { MarkupScreen } from './screens/markup.js';
import { FolderScreen } from './screens/folder.js';
import { Home } from './screens/home.js';
import { SignIn } from './screens/sign-in.js';
import { clearSession, loadSession, rememberReturnTo, type Session } from './session.js';
import './styles.css';

/**
 * The review app (DESIGN.md "The review app"): Preact components, one per screen, routed by path.
 * A screen that needs a member sends a signed-out visitor to `/sign-in` and back afterwards.
 */
function App() {
  const location = useLocation();
  const route = parseRoute(location);
  const [session, setSession] = useState<Session | undefined>(loadSession);

  const needsSession = route.name === 'home' || route.name === 'markup' || route.name === 'folder';
  const signedOut = needsSession && !session;
  useEffect(() => {
    if (!signedOut) return;
    rememberReturnTo(location.pathname + location.search);
    navigate('/sign-in', { replace: true });
  }, [signedOut, location.pathname, location.search]);

  // Signed in already, the sign-in form has nothing to do (Back after signing in leads here): home.
  // A link with a code is still followed, as it may sign in as someone else.
  const signedInAtForm = route.name === 'sign-in' && !route.code && session !== undefined;
  useEffect(() => {
    if (signedInAtForm) navigate('/', { replace: true });
  }, [signedInAtForm]);

  /** The API refused the session (expired or revoked): sign in again, then come back here. */
  const sessionEnded = () => {
    clearSession();
    setSession(undefined);
  };

  const signOut = async () => {
    const token = session?.sessionToken;
    clearSession();
    setSession(undefined);
    // The token is forgotten here whatever the API answers; revoking it is a courtesy to the server.
    if (token) await api('/auth/sign-out', { method: 'POST', token }).catch(() => undefined);
    navigate('/sign-in', { replace: true });
  };

  let screen;
  if (signedOut) screen = <Loading label="Taking you to sign in…" />;
  else if (signedInAtForm) screen = <Loading label="You are signed in; taking you home…" />;
  else if (route.name === 'sign-in') screen = <SignIn code={route.code} onSignedIn={setSession} />;
  else if (route.name === 'home') screen = <Home token={session!.sessionToken} onUnauthorized={sessionEnded} />;
  else if (route.name === 'markup') screen = <MarkupScreen id={route.id} token={session!.sessionToken} onUnauthorized={sessionEnded} />;
  else if (route.name === 'folder')
    screen = (
      <FolderScreen workspaceId={route.workspaceId} folderId={route.folderId} token={session!.sessionToken} onUnauthorized={sessionEnded} />
    );
  else screen = <NotFound />;

  return (
    <div class="shell" onClick={onLinkClick}>
      <header class="topbar">
        <a class="brand" href="/">
          Review Board
        </a>
        {session ? (
          <div class="account">
            <span class="account-email">{session.user.email}</span>
            <button type="button" class="secondary" onClick={signOut}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      {screen}
    </div>
  );
}

function NotFound() {
  return (
    <main class="narrow">
      <ScreenHeading>Page not found</ScreenHeading>
      <p>
        There is nothing at this address. <a href="/">Go to your markups</a>.
      </p>
    </main>
  );
}

render(<App />, document.getElementById('app')!);
