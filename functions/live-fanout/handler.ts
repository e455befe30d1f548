import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { getConfig } from '../../shared/config.js';
import { markupEventLog } from '../../shared/domain/live/log.js';
import { fanOutLive } from '../../shared/domain/live/service.js';
import { liveTransport } from '../../shared/domain/live/transport.js';
import { logger } from '../../shared/logger.js';

getConfig();

/** The table's stream (outbox inserts, filtered by the event source) to the live subscribers of each event's markup. */
export const handler = async (event: DynamoDBStreamEvent, context?: Context) => {
  if (context) logger.addContext(context);
  return fanOutLive(event, liveTransport(), markupEventLog);
};
