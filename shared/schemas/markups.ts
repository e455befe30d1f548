/** Markup event log sort keys are this many digits wide, so they sort by number (`shared/db/markup-events.ts`). */
export const MARKUP_EVENT_SEQ_DIGITS = 12;

/** The largest `after` a log read takes: beyond it sort keys would stop sorting by number. */
export const MAX_MARKUP_EVENT_SEQ = 10 ** MARKUP_EVENT_SEQ_DIGITS - 1;
