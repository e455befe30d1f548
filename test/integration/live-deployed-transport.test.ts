import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../shared/auth/api-key-format.js';
import { ENV, resetConfig } from '../../shared/config.js';
import { revokeApiKey } from '../../shared/db/api-keys.js';
import type { EventRecord } from '../../shared/db/events.js';
import { getLiveConnection, liveSubscriptionsOf } from '../../shared/db/live.js';
import { connectionsApiTransport } from '../../shared/domain/live/connections-api.js';
import type { MarkupEventLog } from '../../shared/domain/live/log.js';
import { connectLive, fanOutLive, receiveLive, sweepLiveConnections } from '../../shared/domain/live/service.js';
import { makeOrganization } from '../support/api.js';
import { liveTicket } from '../support/live.js';
import { makeTypedMarkup } from '../support/threads.js';

/**
 * Issue 32 item 2, the deployed path on the emulators: the live functions' code with API Gateway's
 * connection-management API (PostToConnection, DeleteConnection) answered by a loopback stand-in,
 * and each subscription's last seq sent claimed in the table (a conditional update), as deployed.
 * Events are handed to the fan-out as the stream would (outbox NewImages with their seq).
 */

interface Call {
  method: string;
  connectionId: string;
  body: string;
}

const calls: Call[] = [];
const gone = new Set<string>();
let server: ReturnType<typeof createServer>;
let previous: string | undefined;

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const connectionId = decodeURIComponent(/\/@connections\/([^/?]+)/.exec(request.url ?? '')?.[1] ?? '');
      calls.push({ method: request.method ?? '', connectionId, body });
      if (gone.has(connectionId)) {
        response.writeHead(410, { 'content-type': 'application/json', 'x-amzn-errortype': 'GoneException' }).end('{"message":"Gone"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  previous = process.env[ENV.liveManagementUrl];
  process.env[ENV.liveManagementUrl] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  resetConfig();
});

afterAll(async () => {
  if (previous === undefined) delete process.env[ENV.liveManagementUrl];
  else process.env[ENV.liveManagementUrl] = previous;
  resetConfig();
  await new Promise((resolve) => server.close(resolve));
});

/** No log yet for these markups (their events are handed over here), so catch-ups find nothing. */
const emptyLog: MarkupEventLog = { lastSeq: async () => 0, eventsAfter: async () => ({ events: [], hasMore: false }) };

const posted = (connectionId: string) =>
  calls
    .filter((call) => call.method === 'POST' && call.connectionId === connectionId)
    .map((call) => JSON.parse(call.body) as { type: string; seq?: number });

function streamOf(events: EventRecord[]): DynamoDBStreamEvent {
  return {
    Records: events.map((event, index) => ({
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: String(index + 1),
        NewImage: marshall({
          PK: `WS#${event.workspaceId}#EVENTS`,
          SK: `${event.createdAt}#${event.id}`,
          entity: 'Event',
          ...event,
        }) as never,
      },
    })),
  };
}

describe('the deployed live transport (API Gateway connections, claims in the table)', () => {
  it("posts subscribed then each event once and in order, forgets a gone (410) connection, and closes a revoked key's", async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const ticketOf = async (key: string) => new URL((await liveTicket(key)).url).searchParams.get('ticket')!;
    const [a, b] = [`A${randomUUID()}`, `B${randomUUID()}`];
    expect(await connectLive(await ticketOf(org.workspaceKey), a)).toMatchObject({ ok: true });
    expect(await connectLive(await ticketOf(org.orgKey), b)).toMatchObject({ ok: true });
    for (const connectionId of [a, b])
      await receiveLive(connectionId, JSON.stringify({ type: 'subscribe', markupId: markup.id }), connectionsApiTransport, emptyLog);
    expect(posted(a)).toEqual([{ type: 'subscribed', markupId: markup.id, seq: 0 }]);

    const event = (seq: number): EventRecord =>
      ({
        id: randomUUID(),
        type: 'markup_status_changed',
        workspaceId: org.workspaceId,
        markupId: markup.id,
        createdAt: new Date().toISOString(),
        seq,
      }) as EventRecord;
    const [one, two] = [event(1), event(2)];
    expect(await fanOutLive(streamOf([one, two]), connectionsApiTransport, emptyLog)).toEqual({ batchItemFailures: [] });
    // The same events again (a retried batch): claimed already, nothing sent twice. A gap (4 before 3) is not sent either.
    await fanOutLive(streamOf([one, two, event(4)]), connectionsApiTransport, emptyLog);
    for (const connectionId of [a, b]) {
      const events = posted(connectionId).filter((message) => message.type === 'event');
      expect(events.map((message) => message.seq)).toEqual([1, 2]);
      expect(events[0]).toMatchObject({
        markupId: markup.id,
        event: { id: one.id, type: 'markup_status_changed', workspaceId: org.workspaceId },
      });
    }

    // B is gone (API Gateway answers 410): the fan-out forgets it and its subscription.
    gone.add(b);
    await fanOutLive(streamOf([event(3)]), connectionsApiTransport, emptyLog);
    expect(
      posted(a)
        .filter((message) => message.type === 'event')
        .map((message) => message.seq),
    ).toEqual([1, 2, 3]);
    expect(await getLiveConnection(b)).toBeUndefined();
    expect((await liveSubscriptionsOf(markup.id)).map((subscription) => subscription.connectionId)).toEqual([a]);

    // A's key is revoked: its next delivery closes it (DeleteConnection) instead of sending.
    await revokeApiKey(parseApiKey(org.workspaceKey)!.keyId);
    const before = posted(a).length;
    await fanOutLive(streamOf([event(4)]), connectionsApiTransport, emptyLog);
    expect(posted(a)).toHaveLength(before);
    expect(calls.filter((call) => call.method === 'DELETE').map((call) => call.connectionId)).toEqual([a]);
    expect(await getLiveConnection(a)).toBeUndefined();
    expect(await liveSubscriptionsOf(markup.id)).toEqual([]);
  });

  it('closes, in its periodic sweep, a connection whose credential died though no event came for it, and leaves the others', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const ticketOf = async (key: string) => new URL((await liveTicket(key)).url).searchParams.get('ticket')!;
    const [dying, living] = [`D${randomUUID()}`, `L${randomUUID()}`];
    expect(await connectLive(await ticketOf(org.workspaceKey), dying)).toMatchObject({ ok: true });
    expect(await connectLive(await ticketOf(org.orgKey), living)).toMatchObject({ ok: true });
    await receiveLive(dying, JSON.stringify({ type: 'subscribe', markupId: markup.id }), connectionsApiTransport, emptyLog);
    await revokeApiKey(parseApiKey(org.workspaceKey)!.keyId);
    expect(await sweepLiveConnections(connectionsApiTransport)).toBeGreaterThanOrEqual(1);
    const deleted = calls.filter((call) => call.method === 'DELETE').map((call) => call.connectionId);
    expect(deleted).toContain(dying);
    expect(deleted).not.toContain(living);
    expect(await getLiveConnection(dying)).toBeUndefined();
    expect(await liveSubscriptionsOf(markup.id)).toEqual([]);
    expect(await getLiveConnection(living)).toBeDefined();
  });
});
