/** A file size as people read it: bytes under 1 KB (an 11-byte file is not "1 KB"), then KB, then MB. */
export function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const kilobytes = Math.round(bytes / 1024);
  return kilobytes < 1024 ? `${kilobytes} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
