/** What stored bytes are counted as, per organization. */
export const STORAGE_CATEGORIES = ['pdfs', 'videos', 'images', 'attachments', 'originals'] as const;

/** Whether a workspace keeps the originals of converted markups: always, never, or as each markup asks. */
export const ORIGINAL_FILE_STORAGE_POLICIES = ['STORE_ALWAYS', 'NEVER_STORE', 'ASK_PER_PROJECT'] as const;
