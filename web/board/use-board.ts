import { useEffect, useState } from 'preact/hooks';
import type { BoardState, BoardStore } from './store.js';

/** The store's state in a component, re-rendered on every change. */
export function useBoardState(store: BoardStore): BoardState {
  const [state, setState] = useState(store.get());
  useEffect(() => {
    setState(store.get());
    return store.subscribe(() => setState(store.get()));
  }, [store]);
  return state;
}
