import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorMessage, Loading, ScreenHeading } from '../components.js';
import { navigate } from '../router.js';
import { saveSession, takeReturnTo, type Session } from '../session.js';

/**
 * `/sign-in`: the form that emails a sign-in link (`POST /auth/email-sign-in`, 202 whatever the
 * address), and `/sign-in?code=…`, where the link lands: the code is exchanged for a session
 * (`POST /auth/email-sign-in/verify`) and the reviewer goes back where they were headed.
 */
export function SignIn({ code, onSignedIn }: { code?: string; onSignedIn: (session: Session) => void }) {
  const [verifying, setVerifying] = useState(Boolean(code));
  const [verifyError, setVerifyError] = useState<string>();

  useEffect(() => {
    if (!code) return;
    let cancelled = false;
    setVerifying(true);
    setVerifyError(undefined);
    api<Session>('/auth/email-sign-in/verify', { method: 'POST', body: { code } })
      .then((session) => {
        if (cancelled) return;
        saveSession(session);
        onSignedIn(session);
        navigate(takeReturnTo(), { replace: true });
      })
      .catch((error: unknown) => {
        if (cancelled) return;
        setVerifying(false);
        // A malformed code (a link cut short when copied) is as unusable as a spent one: the same words.
        const malformed = error instanceof ApiError && error.status === 400;
        setVerifyError(
          malformed
            ? 'This sign-in link is not valid: it may be cut short, used already or expired. Ask for a new link below.'
            : error instanceof ApiError
              ? error.detail
              : 'Signing in failed. Ask for a new link below.',
        );
        // The code is spent or wrong either way: keep it out of the address bar and the history.
        history.replaceState(null, '', '/sign-in');
      });
    return () => {
      cancelled = true;
    };
  }, [code]);

  if (verifying) {
    return (
      <main class="narrow">
        <ScreenHeading>Signing you in</ScreenHeading>
        <Loading label="Checking your sign-in link…" />
      </main>
    );
  }
  return (
    <main class="narrow">
      <ScreenHeading>Sign in to Review Board</ScreenHeading>
      {verifyError ? <ErrorMessage detail={verifyError} /> : null}
      <EmailForm />
    </main>
  );
}

function EmailForm() {
  const [email, setEmail] = useState('');
  const [sending, setSending] = useState(false);
  const [sentTo, setSentTo] = useState<string>();
  const [error, setError] = useState<string>();

  const submit = async (event: Event) => {
    event.preventDefault();
    setSending(true);
    setError(undefined);
    setSentTo(undefined);
    const address = email.trim();
    try {
      await api('/auth/email-sign-in', { method: 'POST', body: { email: address } });
      setSentTo(address);
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.detail : 'Sending the sign-in link failed.');
    } finally {
      setSending(false);
    }
  };

  return (
    <form class="card" onSubmit={submit} noValidate={false}>
      <p class="form-hint">Enter the email address you were invited with. We email you a link that signs you in.</p>
      <label for="sign-in-email">Email</label>
      <input
        id="sign-in-email"
        name="email"
        type="email"
        autoComplete="email"
        required
        value={email}
        onInput={(event) => setEmail((event.target as HTMLInputElement).value)}
      />
      <button type="submit" disabled={sending}>
        Send sign-in link
      </button>
      <div role="status" aria-live="polite">
        {sentTo ? (
          <p class="message message-success">
            Check your email. If {sentTo} belongs to a member or an invitee, a sign-in link is on its way. It works once, within 15 minutes.
          </p>
        ) : null}
      </div>
      {error ? <ErrorMessage detail={error} /> : null}
    </form>
  );
}
