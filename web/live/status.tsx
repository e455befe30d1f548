import { useEffect, useState } from 'preact/hooks';
import type { LiveClient, LiveState } from './client.js';

/** The client's connection state in a component, re-rendered on every change. */
export function useLiveState(live: LiveClient | undefined): LiveState {
  const [state, setState] = useState<LiveState>(live?.state ?? 'closed');
  useEffect(() => {
    if (!live) return;
    setState(live.state);
    return live.onState(setState);
  }, [live]);
  return state;
}

/**
 * A discreet line that says when others' comments do NOT arrive by themselves: "Reconnecting…"
 * while the socket is opened again (and what it missed read). Empty while live, connecting the
 * first time or closed. The status region is always in the page, so assistive technology
 * announces the change (a region that appears with its text is often not announced).
 */
export function LiveStatus({ live, class: className }: { live: LiveClient | undefined; class?: string }) {
  const state = useLiveState(live);
  return (
    <p role="status" class={`live-status${className ? ` ${className}` : ''}`}>
      {state === 'reconnecting' ? (
        <span class="live-status-text">Reconnecting… New comments appear when the connection is back.</span>
      ) : null}
    </p>
  );
}
