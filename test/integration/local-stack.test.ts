import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { javaProcessesFor, startStack } from '../support/processes.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'review-board-start-'));
  dirs.push(dir);
  return dir;
};

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const get = (baseUrl: string, path: string, key: string) =>
  fetch(`${baseUrl}/api/v2${path}`, { headers: { Authorization: `Bearer ${key}`, 'Service-API-Version': '2023-02-22' } });

describe('npm start (DESIGN.md local stack contract)', () => {
  it('writes stack.json whose seeded keys work against GET /workspace, lists the emulators (SES too) in services.json, prints the banner with the reference and app URLs, serves the app, and stops every child on SIGTERM', async () => {
    const dataDir = tempDir();

    const started = await startStack(dataDir, { MEMORY: '1' });
    const { stack } = started;
    const asWorkspace = await get(stack.baseUrl, '/workspace', stack.workspaceApiKey);
    const asOrganization = await get(stack.baseUrl, '/workspace', stack.organizationApiKey);
    const javaWhileUp = javaProcessesFor('-inMemory');
    const services = JSON.parse(readFileSync(join(dataDir, 'services.json'), 'utf8')) as { endpoints: Record<string, string> };
    const sesStore = await fetch(new URL('/store', services.endpoints.ses));
    // The seeded owner signs in: the link arrives in the SES emulator, as the banner says.
    const signInAsked = await fetch(`${stack.baseUrl}/api/v2/auth/email-sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'owner@review-board.localhost' }),
    });
    const stored = (await (await fetch(new URL('/store', services.endpoints.ses))).json()) as {
      emails: { destination: { to: string[] }; body: { text?: string } }[];
    };
    const signInLink = stored.emails
      .find((email) => email.destination.to.includes('owner@review-board.localhost'))
      ?.body.text?.match(/\S+\/sign-in\?code=\S+/)?.[0];
    const app = await fetch(`${stack.baseUrl}/sign-in`);
    const appHtml = await app.text();
    const code = await started.stop('SIGTERM');

    expect(Object.keys(stack).sort()).toEqual(['baseUrl', 'organizationApiKey', 'organizationId', 'workspaceApiKey', 'workspaceId']);
    expect(stack.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(asWorkspace.status).toBe(200);
    expect(((await asWorkspace.json()) as { data: { id: string } }).data.id).toBe(stack.workspaceId);
    expect(asOrganization.status).toBe(200);
    expect(started.output()).toContain(stack.workspaceApiKey);
    // The banner names the API reference beside the API (issue 29, item 4).
    expect(started.output()).toContain(`API reference       ${stack.baseUrl}/api/v2/docs`);
    // An absolute DATA_DIR is printed as given, not relative to the working directory.
    expect(started.output()).toContain(`stack.json          ${join(dataDir, 'stack.json')}`);
    // One line says how to sign in to the review app as the seeded owner, and where the link arrives (issue 30 part 2).
    expect(started.output()).toContain(
      `Sign in             ${stack.baseUrl}/sign-in as owner@review-board.localhost; the link arrives in the SES emulator at ${services.endpoints.ses}/`,
    );
    expect(signInAsked.status).toBe(202);
    expect(signInLink).toMatch(new RegExp(`^${stack.baseUrl}/sign-in\\?code=[A-Za-z0-9_-]{43}$`));
    // npm start serves the review app, built if need be, on the API's port (issue 30).
    expect(started.output()).toContain(`Review app          ${stack.baseUrl}/`);
    expect(app.status).toBe(200);
    expect(app.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    expect(appHtml).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    expect(javaWhileUp.length).toBeGreaterThan(0);
    expect(Object.keys(services.endpoints).sort()).toEqual(['dynamodb', 's3', 'ses', 'sqs']);
    for (const endpoint of Object.values(services.endpoints)) expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sesStore.status).toBe(200);
    expect(code).toBe(0);
    // MEMORY=1 keeps nothing on disk: the files the tools read while it ran go with it (the exchange signing key among them).
    expect(readdirSync(dataDir)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(javaProcessesFor(dataDir)).toEqual([]);
  }, 90_000);

  it('persists state under DATA_DIR: after a restart the same keys work and created workspaces are still there', async () => {
    const dataDir = tempDir();

    const first = await startStack(dataDir);
    const created = await fetch(`${first.stack.baseUrl}/api/v2/workspace`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${first.stack.organizationApiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Survives restarts' }),
    });
    await first.stop('SIGINT');
    const second = await startStack(dataDir);
    const listed = await get(second.stack.baseUrl, '/workspaces', second.stack.organizationApiKey);
    const names = ((await listed.json()) as { data: { data: { name: string }[] } }).data.data.map((w) => w.name);
    await second.stop();

    expect(created.status).toBe(201);
    expect(second.stack.organizationId).toBe(first.stack.organizationId);
    expect(second.stack.workspaceApiKey).toBe(first.stack.workspaceApiKey);
    expect(listed.status).toBe(200);
    expect(names).toContain('Survives restarts');
  }, 120_000);
});
