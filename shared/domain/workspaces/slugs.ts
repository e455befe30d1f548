/** Workspace slugs: lowercase letters and digits in hyphen-separated words, at most 63 characters. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SLUG_MAX_LENGTH = 63;

/** A slug derived from a display name: accents dropped, anything else non-alphanumeric becomes a hyphen. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX_LENGTH - 4)
    .replace(/-+$/g, '');
  return slug || 'workspace';
}

/** The n-th candidate for a taken slug: `name`, `name-2`, `name-3`, … */
export function slugCandidate(base: string, attempt: number): string {
  return attempt === 0 ? base : `${base}-${attempt + 1}`;
}
