import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Session } from '../../web/embed/session.js';

/**
 * Issue 31 item 1: the embeddable client exchanges its customer JWT (or identity-provider token)
 * for an exchange token and exchanges again before that token expires, with no request waiting on
 * it; concurrent requests share one exchange; a 401 is answered by one new exchange and a retry.
 */
const API = 'https://app.example/api/v2';
const LIFETIME_MS = 300_000;

interface Sent {
  url: string;
  init: RequestInit;
}

function fakeApi() {
  const sent: Sent[] = [];
  let minted = 0;
  let refuseNext = false;
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const fetch = vi.fn(async (url: string, init: RequestInit = {}) => {
    sent.push({ url, init });
    if (url.endsWith('/auth/exchange') || url.endsWith('/auth/sdk-exchange')) {
      minted += 1;
      return json(200, {
        data: {
          exchangeToken: `exchange-${minted}`,
          expiresAt: new Date(Date.now() + LIFETIME_MS).toISOString(),
          workspaceId: 'w',
          userId: 'u',
          markupId: 'm',
        },
      });
    }
    if (refuseNext) {
      refuseNext = false;
      return json(401, { status: 401, title: 'Unauthorized', detail: 'The exchange token expired.' });
    }
    return json(200, { data: { auth: (init.headers as Record<string, string>).Authorization } });
  });
  return { fetch, sent, refuse: () => (refuseNext = true), exchanges: () => sent.filter((request) => request.url.includes('/auth/')) };
}

describe('the embeddable client session', () => {
  let api: ReturnType<typeof fakeApi>;
  beforeEach(() => {
    vi.useFakeTimers();
    api = fakeApi();
    vi.stubGlobal('fetch', api.fetch);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('exchanges the customer JWT once for concurrent requests, and again a minute before the token expires without a request asking', async () => {
    let jwts = 0;
    const session = new Session(API, 'pk_test', { getToken: async () => `customer-jwt-${++jwts}` });
    const answers = await Promise.all([
      session.request<{ auth: string }>('/threads?markupId=m'),
      session.request<{ auth: string }>('/markups/m/view-modes'),
    ]);
    expect(answers.map((answer) => answer.auth)).toEqual(['Bearer exchange-1', 'Bearer exchange-1']);
    expect(api.exchanges()).toHaveLength(1);
    expect(JSON.parse(api.exchanges()[0]!.init.body as string)).toEqual({ token: 'customer-jwt-1' });
    expect((api.exchanges()[0]!.init.headers as Record<string, string>)['Service-API-Version']).toBe('2023-02-22');

    await vi.advanceTimersByTimeAsync(LIFETIME_MS - 61_000);
    expect(api.exchanges()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(api.exchanges()).toHaveLength(2);
    expect(JSON.parse(api.exchanges()[1]!.init.body as string)).toEqual({ token: 'customer-jwt-2' });
    expect((await session.request<{ auth: string }>('/threads?markupId=m')).auth).toBe('Bearer exchange-2');
    session.stop();
  });

  it('answers a 401 with one new exchange and one retry', async () => {
    const session = new Session(API, 'pk_test', { getToken: async () => 'jwt' });
    await session.request('/threads?markupId=m');
    api.refuse();
    expect((await session.request<{ auth: string }>('/threads?markupId=m')).auth).toBe('Bearer exchange-2');
    expect(api.exchanges()).toHaveLength(2);
    session.stop();
  });

  it('uses the identity-provider flow: the provider token as bearer, publicKey, markupId and the page origin', async () => {
    const session = new Session(API, 'pk_test', { sdk: { getIdpToken: async () => 'idp-token' } }, 'markup-1', 'https://customer.example');
    const exchanged = await session.exchange();
    expect(exchanged.markupId).toBe('m');
    const [request] = api.exchanges();
    expect(request!.url).toBe(`${API}/auth/sdk-exchange`);
    expect((request!.init.headers as Record<string, string>).Authorization).toBe('Bearer idp-token');
    expect(JSON.parse(request!.init.body as string)).toEqual({
      publicKey: 'pk_test',
      markupId: 'markup-1',
      sdkOrigin: 'https://customer.example',
    });
    session.stop();
  });

  it('refuses options that name neither flow, both, or the identity-provider flow without a markup', () => {
    expect(() => new Session(API, 'pk', {})).toThrow(/exactly one of getToken/);
    expect(() => new Session(API, 'pk', { getToken: async () => 'j', sdk: { getIdpToken: async () => 'i' } })).toThrow(
      /exactly one of getToken/,
    );
    expect(() => new Session(API, 'pk', { sdk: { getIdpToken: async () => 'i' } })).toThrow(/needs markupId/);
  });

  it('stops refreshing once unmounted', async () => {
    const session = new Session(API, 'pk_test', { getToken: async () => 'jwt' });
    await session.exchange();
    session.stop();
    await vi.advanceTimersByTimeAsync(LIFETIME_MS * 2);
    expect(api.exchanges()).toHaveLength(1);
  });
});
