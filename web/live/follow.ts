import type { BoardStore } from '../board/store.js';
import type { LiveClient, LiveEvent } from './client.js';

/** Events about the markup itself (its conversion finished, its status or read-only flag changed), not one of its threads. */
export const isMarkupEvent = (type: string): boolean =>
  type === 'markup_ready' || type === 'markup_status_changed' || type === 'set_project_read_only';

/**
 * Keeps a board's store up to date with its markup's events: thread events go to the store (which
 * applies what it can and reads the one thread again), markup events to `onMarkup` (the caller
 * reads the markup again); when the subscription starts over, the thread list is read again.
 * Answers the function that stops following.
 */
export function followMarkup(
  live: LiveClient,
  store: BoardStore,
  options: { onMarkup?: (event: LiveEvent) => void; onResync?: () => void } = {},
): () => void {
  return live.subscribe(store.markupId, {
    onEvent: (event) => (isMarkupEvent(event.type) ? options.onMarkup?.(event) : store.applyEvent(event)),
    onResync: () => {
      store.reloadQuietly();
      options.onResync?.();
    },
  });
}
