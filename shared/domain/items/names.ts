/** Names are at most this long (the `Name` schema); suffixed names are cut to fit. */
const NAME_MAX_LENGTH = 200;

/** Folder names compare case-insensitively: this is the form they are compared in. */
export const lowerName = (name: string) => name.toLowerCase();
const NUMBERED = /^(.+?) \((\d+)\)$/;

/**
 * The first of `desired`, `desired (2)`, `desired (3)`, … not in `taken` (lower-cased names).
 * A name that already ends in ` (n)` is numbered from its base, so `Plans (2)` becomes `Plans (3)`
 * rather than `Plans (2) (2)`. The base is cut so the suffixed name stays within the name limit.
 */
export function freeName(desired: string, taken: ReadonlySet<string>): string {
  if (!taken.has(lowerName(desired))) return desired;
  const base = NUMBERED.exec(desired)?.[1] ?? desired;
  for (let n = 2; ; n += 1) {
    const suffix = ` (${n})`;
    const candidate = `${base.slice(0, NAME_MAX_LENGTH - suffix.length).trimEnd()}${suffix}`;
    if (!taken.has(lowerName(candidate))) return candidate;
  }
}

/**
 * Move rule 4 (and folder creation): the folder keeps `name` when no sibling folder has it
 * (case-insensitively); otherwise it takes `fallbackName` when given, else a numbered name. A
 * fallback that clashes too is numbered in turn.
 */
export function chooseFolderName(name: string, fallbackName: string | undefined, taken: ReadonlySet<string>): string {
  if (!taken.has(lowerName(name))) return name;
  return freeName(fallbackName ?? name, taken);
}
