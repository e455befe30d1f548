import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { getConfig } from '../../config.js';
import {
  claimLiveSeq,
  deleteLiveConnection,
  deleteLiveSubscription,
  openLiveSubscription,
  startLiveSubscription,
  type StoredPrincipal,
} from '../../db/live.js';
import type { DeliveryOutcome, LiveTransport } from './service.js';

let client: ApiGatewayManagementApiClient | undefined;

function connections(): ApiGatewayManagementApiClient {
  const { liveManagementUrl, region } = getConfig();
  if (!liveManagementUrl) throw new Error('LIVE_MANAGEMENT_URL is not set: this function was not granted the WebSocket API.');
  client ??= new ApiGatewayManagementApiClient({ region, endpoint: liveManagementUrl });
  return client;
}

const isGone = (error: unknown) =>
  error instanceof GoneException ||
  (error as { name?: string } | undefined)?.name === 'GoneException' ||
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410;

/**
 * The deployed live transport: API Gateway's connections (`PostToConnection`, `DeleteConnection`;
 * `execute-api:ManageConnections` on the one WebSocket API), each subscription's last seq sent kept
 * on its record in the table and claimed with a conditional update. A connection API Gateway says
 * is gone (410) is forgotten with its subscriptions.
 */
export const connectionsApiTransport: LiveTransport = {
  async send(connectionId, text) {
    try {
      await connections().send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from(text, 'utf8') }));
      return true;
    } catch (error) {
      if (!isGone(error)) throw error;
      await deleteLiveConnection(connectionId);
      return false;
    }
  },
  open: (connectionId: string, markupId: string, principal: StoredPrincipal, workspaceId: string) =>
    openLiveSubscription({ connectionId, markupId, principal, workspaceId }, Date.now()),
  async start(connectionId, markupId, sent) {
    await startLiveSubscription(markupId, connectionId, sent);
  },
  async deliver(connectionId, markupId, seq, text): Promise<DeliveryOutcome> {
    const claim = await claimLiveSeq(markupId, connectionId, seq);
    if (!claim.claimed) return { kind: 'not-next', ...(claim.sent === undefined ? {} : { sent: claim.sent }) };
    if (await connectionsApiTransport.send(connectionId, text)) return { kind: 'sent' };
    await deleteLiveSubscription(markupId, connectionId);
    return { kind: 'gone' };
  },
  async close(connectionId) {
    // API Gateway closes with its own code (1000 or 1001); the client reads a 4401's meaning by asking for a ticket again (401).
    await connections()
      .send(new DeleteConnectionCommand({ ConnectionId: connectionId }))
      .catch((error: unknown) => {
        if (!isGone(error)) throw error;
      });
    await deleteLiveConnection(connectionId);
  },
};
