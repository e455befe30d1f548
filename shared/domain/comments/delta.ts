import type { Delta } from '../../db/messages.js';

/**
 * Messages are kept as a Quill Delta (`messageJson`) and as plain text (`content`), always in step:
 * the plain text is what the Delta reads as, and a Delta made from plain text is that text as one
 * insert. Mentions are embeds `{ insert: { mention: { id, name? } } }`, read as `@name`.
 */

type Embed = Record<string, unknown>;

function mentionOf(embed: Embed): { id: string; name?: string } | undefined {
  const mention = embed.mention;
  if (typeof mention !== 'object' || mention === null) return undefined;
  const { id, name, value } = mention as Record<string, unknown>;
  if (typeof id !== 'string') return undefined;
  const label = typeof name === 'string' ? name : typeof value === 'string' ? value : undefined;
  return { id, name: label };
}

/** The text a Delta reads as: its string inserts, mentions as `@name`, other embeds (images, video) as nothing; no trailing newlines. */
export function plainTextOf(delta: Delta): string {
  const text = delta.ops
    .map((op) => {
      if (typeof op.insert === 'string') return op.insert;
      const mention = mentionOf(op.insert);
      return mention ? `@${mention.name ?? mention.id}` : '';
    })
    .join('');
  return normalizeText(text);
}

/** A Delta holding `text` as one insert, ending in the newline every Quill document ends with. */
export function deltaOf(text: string): Delta {
  return { ops: [{ insert: `${normalizeText(text)}\n` }] };
}

/** Ids of the users a Delta mentions, each once, in order of appearance. */
export function mentionIdsOf(delta: Delta): string[] {
  const ids = delta.ops.flatMap((op) => (typeof op.insert === 'string' ? [] : [mentionOf(op.insert)?.id ?? []].flat()));
  return [...new Set(ids)];
}

/** Line endings as `\n`, without the trailing newlines a Delta always carries. */
export function normalizeText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
}

export interface MessageText {
  content: string;
  delta: Delta;
}

/**
 * The message text from what a request sent: the Delta when given (and `content`, when also given,
 * must read the same, or the two would disagree), else a Delta made from `content`. Undefined when
 * neither was sent. Throws a message for the caller when the two disagree.
 */
export function resolveMessageText(input: { content?: string; message?: Delta }): MessageText | undefined {
  if (input.message) {
    const content = plainTextOf(input.message);
    if (input.content !== undefined && normalizeText(input.content) !== content) {
      throw new TextMismatch(
        `content ("${abbreviate(input.content)}") does not read as the message Delta does ("${abbreviate(content)}"); send one of them, or both in step.`,
      );
    }
    return { content, delta: input.message };
  }
  if (input.content !== undefined) return { content: normalizeText(input.content), delta: deltaOf(input.content) };
  return undefined;
}

export class TextMismatch extends Error {}

const abbreviate = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text);
