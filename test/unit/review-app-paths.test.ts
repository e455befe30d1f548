import { describe, expect, it } from 'vitest';
import { cacheControlFor, contentSecurityPolicy, contentTypeFor, isAppPath } from '../../shared/http/web-app.js';
import { isReturnPath } from '../../web/app/return-path.js';

describe('isReturnPath: where the app goes back after sign-in', () => {
  it('takes paths of the app, with their query', () => {
    for (const path of ['/', '/markups/0b8ad1f2-52a4-4d63-bd3c-4f3d2d9e0d11', '/markups/x?view=2#c3'])
      expect(isReturnPath(path), path).toBe(true);
  });

  it('refuses anything that leaves the origin, and the sign-in page itself', () => {
    for (const path of [
      '//evil.example/x',
      '/\\evil.example',
      'https://evil.example',
      'javascript:alert(1)',
      'markups/x',
      '',
      '/ x',
      '/sign-in',
      '/sign-in?code=abc',
      '/sign-in/',
      null,
      42,
    ]) {
      expect(isReturnPath(path), String(path)).toBe(false);
    }
  });
});

describe('serving rules shared by the local gateway and CloudFront', () => {
  it('answers index.html for app paths only: no file extension, not under /api/', () => {
    expect(['/', '/sign-in', '/markups/abc', '/no/such/screen'].every(isAppPath)).toBe(true);
    expect(['/assets/main-ABC.js', '/favicon.ico', '/index.html', '/api/v2/markups', '/api'].some(isAppPath)).toBe(false);
  });

  it('caches hashed assets for a year and revalidates everything else', () => {
    expect(cacheControlFor('/assets/main-ABC.js')).toBe('public, max-age=31536000, immutable');
    expect(cacheControlFor('/index.html')).toBe('no-cache');
    expect(contentTypeFor('/assets/main-ABC.css')).toBe('text/css; charset=utf-8');
    expect(contentTypeFor('/x.unknown')).toBe('application/octet-stream');
  });

  it('allows the storage origin in the CSP, from a URL or a deploy-time token, and refuses anything else', () => {
    expect(contentSecurityPolicy('http://127.0.0.1:9000/')).toContain("connect-src 'self' http://127.0.0.1:9000;");
    expect(contentSecurityPolicy('https://${Token[TOKEN.1]}.s3.${Token[AWS.Region]}.amazonaws.com')).toContain(
      "img-src 'self' https://${Token[TOKEN.1]}.s3.${Token[AWS.Region]}.amazonaws.com data: blob:;",
    );
    expect(() => contentSecurityPolicy("https://a.example; script-src 'unsafe-inline'")).toThrow();
    expect(() => contentSecurityPolicy('not a url')).toThrow();
  });

  it("allows the live-update socket origin in connect-src when it is not the page's own (deployed: the WebSocket API), and refuses anything but ws(s)", () => {
    expect(contentSecurityPolicy('http://127.0.0.1:9000')).not.toMatch(/wss?:/);
    expect(
      contentSecurityPolicy('https://b.s3.amazonaws.com', 'wss://${Token[TOKEN.7]}.execute-api.${Token[AWS.Region]}.amazonaws.com/'),
    ).toContain("connect-src 'self' https://b.s3.amazonaws.com wss://${Token[TOKEN.7]}.execute-api.${Token[AWS.Region]}.amazonaws.com;");
    expect(() => contentSecurityPolicy('https://b.s3.amazonaws.com', "wss://a.example; script-src 'unsafe-inline'")).toThrow();
    expect(() => contentSecurityPolicy('https://b.s3.amazonaws.com', 'https://a.example')).toThrow();
  });
});
