import type { Context, ScheduledEvent } from 'aws-lambda';
import { getConfig } from '../../shared/config.js';
import { sweepLiveConnections } from '../../shared/domain/live/service.js';
import { liveTransport } from '../../shared/domain/live/transport.js';
import { logger } from '../../shared/logger.js';

getConfig();

/**
 * Closes every live-update connection whose credential died (DESIGN.md "Credentials die with what
 * they stand for"), on a schedule (an EventBridge rule deployed, a timer in the local stack, whose
 * gateway also checks its own sockets every 2 s); a failure throws, so the rule's retries and then
 * its dead-letter queue see it.
 */
export async function handler(_event: Partial<ScheduledEvent>, context?: Context): Promise<{ closed: number }> {
  if (context) logger.addContext(context);
  const closed = await sweepLiveConnections(liveTransport());
  if (closed > 0) logger.info('live connections of dead credentials closed', { closed });
  return { closed };
}
