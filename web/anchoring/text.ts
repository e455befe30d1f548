/** Whitespace runs become one space; the ends are trimmed. The page text and every quote are normalised so. */
export function normaliseText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
