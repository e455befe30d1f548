/** The pin-and-thread board: used by the review app and by the embeddable client. */
export { Board, refusalOf, showsAt, type BoardProps } from './board.js';
export { Dialog } from './dialog.js';
export { BoardStore, useBoardState, visibleThreads, type BoardState, type ThreadFilter } from './store.js';
export { boardTransport, type BoardTransport, type Request } from './transport.js';
export type * from './types.js';
