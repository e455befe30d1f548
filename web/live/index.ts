/** Live updates (DESIGN.md "Live updates"): the review app and the embeddable client share this module. */
export {
  backoffDelay,
  LiveClient,
  type LiveEvent,
  type LiveOptions,
  type LiveState,
  type SocketFactory,
  type Subscription,
} from './client.js';
export { followMarkup, isMarkupEvent } from './follow.js';
export { LiveStatus, useLiveState } from './status.js';
