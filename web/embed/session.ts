import type { Request } from '../board/transport.js';

/** The only API version (DESIGN.md "Version header"). */
const VERSION = '2023-02-22';
/** A token is replaced this long before it expires (and never later than at 80 % of its life). */
const REFRESH_MARGIN_MS = 60_000;

/** How the client proves who its user is (DESIGN.md "Embeddable client"): exactly one of the two. */
export interface Identity {
  /** Answers a customer JWT signed by the customer's server (the installation's key). */
  getToken?: () => Promise<string>;
  /** The identity-provider flow: answers the provider's access token for `POST /auth/sdk-exchange`. */
  sdk?: { getIdpToken: () => Promise<string> };
}

export interface Exchanged {
  exchangeToken: string;
  expiresAt: string;
  workspaceId: string;
  userId: string;
  markupRole?: string;
  /** The markup the token is bound to (the customer exchange echoes it when bound; the SDK exchange always is). */
  markupId?: string;
}

/** An API refusal: `message` is the problem's detail, `status` its HTTP status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function problemOf(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => undefined)) as { detail?: string; title?: string } | undefined;
  return new ApiError(body?.detail ?? body?.title ?? `The request failed (${response.status}).`, response.status);
}

/**
 * One exchange token at a time, exchanged again before it expires (a timer at the refresh point,
 * and a check on every request in case the timer was throttled in a background tab). Concurrent
 * callers share one exchange.
 */
export class Session {
  private current?: Exchanged & { refreshAt: number; expiresAtMs: number };
  private pending?: Promise<Exchanged>;
  private timer?: ReturnType<typeof setTimeout>;
  private stopped = false;

  constructor(
    private readonly apiUrl: string,
    private readonly publicKey: string,
    private readonly identity: Identity,
    private readonly markupId?: string,
    /** The page's origin: the identity-provider exchange records it as `sdkOrigin`. */
    private readonly pageOrigin?: string,
  ) {
    if (!identity.getToken === !identity.sdk)
      throw new TypeError('mount(): give exactly one of getToken (customer JWT) and sdk: { getIdpToken } (identity provider).');
    if (identity.sdk && !markupId) throw new TypeError('mount(): the identity-provider flow (sdk) needs markupId.');
  }

  /** The current exchange (exchanging first when there is none or it is due). */
  async exchange(force = false): Promise<Exchanged> {
    if (!force && this.current && Date.now() < this.current.refreshAt) return this.current;
    this.pending ??= this.exchangeNow().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async exchangeNow(): Promise<Exchanged> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Service-API-Version': VERSION };
    let response: Response;
    if (this.identity.sdk) {
      const idpToken = await this.identity.sdk.getIdpToken();
      response = await fetch(`${this.apiUrl}/auth/sdk-exchange`, {
        method: 'POST',
        headers: { ...headers, Authorization: `Bearer ${idpToken}` },
        body: JSON.stringify({ publicKey: this.publicKey, markupId: this.markupId, sdkOrigin: this.pageOrigin }),
      });
    } else {
      const token = await this.identity.getToken!();
      response = await fetch(`${this.apiUrl}/auth/exchange`, { method: 'POST', headers, body: JSON.stringify({ token }) });
    }
    if (!response.ok) throw await problemOf(response);
    const exchanged = ((await response.json()) as { data: Exchanged }).data;
    if (this.identity.sdk) exchanged.markupId ??= this.markupId;
    const now = Date.now();
    const expiresAtMs = Date.parse(exchanged.expiresAt);
    const life = Math.max(0, expiresAtMs - now);
    const refreshAt = now + Math.max(0, Math.min(life - REFRESH_MARGIN_MS, life * 0.8));
    this.current = { ...exchanged, refreshAt, expiresAtMs };
    this.schedule(refreshAt - now);
    return exchanged;
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    // Exchanged ahead of time, so no request waits on it; a failure is retried on the next request.
    this.timer = setTimeout(() => void this.exchange(true).catch(() => undefined), Math.max(1000, delay));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** The board's request function: the envelope's `data`, the exchange token, one retry after a 401. */
  readonly request: Request = async <T>(path: string, options: { method?: string; body?: unknown } = {}): Promise<T> => {
    const send = async (token: string) =>
      fetch(`${this.apiUrl}${path}`, {
        method: options.method ?? 'GET',
        headers: {
          'Service-API-Version': VERSION,
          Authorization: `Bearer ${token}`,
          ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
      });
    let response = await send((await this.exchange()).exchangeToken);
    if (response.status === 401) response = await send((await this.exchange(true)).exchangeToken);
    if (!response.ok) throw await problemOf(response);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? (JSON.parse(text) as { data: T }).data : undefined) as T;
  };
}
