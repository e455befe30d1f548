/** Displayable images (docs/api-files.md, POST /markups/from-files): several of them make one image markup. */
const DISPLAYABLE_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/bmp', 'image/webp', 'image/svg+xml']);

/**
 * Groups files into markups as POST /markups/from-files takes them: all displayable images together
 * make one image markup; any other file (PDF, video, TIFF…) makes a markup of its own.
 */
export function markupGroups<T extends { type: string }>(files: readonly T[]): T[][] {
  const images = files.filter((file) => DISPLAYABLE_IMAGES.has(file.type));
  const others = files.filter((file) => !DISPLAYABLE_IMAGES.has(file.type));
  return [...(images.length > 0 ? [images] : []), ...others.map((file) => [file])];
}
