/** A version-4 UUID, lower case, as the service issues ids. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A well-formed id that no record has: requests for it must answer 404, not 400. */
export const missingId = '00000000-0000-4000-8000-000000000000';
