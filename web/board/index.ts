/** The pin-and-thread board: used by the review app and by the embeddable client. */
export { Board, NewCommentDialog, ThreadDialog, type BoardProps } from './board.js';
export { Dialog } from './dialog.js';
export { formatTime, isUnread, percentOf, refusalOf, orderThreads, showsAt, videoRange, visibleThreads } from './pins.js';
export { BoardStore, type BoardState, type ThreadFilter, type ThreadOrder } from './store.js';
export { boardTransport, type BoardTransport, type Request } from './transport.js';
export { StorageRefusal, uploadThroughPolicy, type UploadTarget } from './upload.js';
export { useBoardState } from './use-board.js';
export type * from './types.js';
