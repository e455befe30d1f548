/**
 * The anchoring benchmark's corpus (issue 31 part 5): pairs of pages, before and after a change,
 * generated from a seed so every run sees the same pages. Each page is a small shop site (nav,
 * hero, a product grid, an article, a FAQ, a pricing table, a footer) in one of two markup styles:
 * hand-written (word-like classes, a few ids, indented) or framework-rendered (hashed classes,
 * counter ids, no whitespace between elements). The commented element carries
 * `data-bench-target`, which the benchmark strips before the anchoring code sees the page.
 */

export const KINDS = [
  'text edited',
  'element moved',
  'siblings inserted',
  'classes renamed',
  'framework re-render',
  'element removed',
  'look-alike added',
  'look-alike before it',
  'exact copy beside it',
  'look-alike after it',
] as const;
/**
 * An exact copy of the element's card, row or item put right before it: the copy stands where the
 * original stood, between the same texts, so nothing tells them apart. Only "never wrong" is asked
 * of this kind; unanchored is the answer expected.
 */
export const UNDECIDABLE: readonly Kind[] = ['exact copy beside it'];
export type Kind = (typeof KINDS)[number];

export interface PagePair {
  kind: Kind;
  name: string;
  before: string;
  /** The same page after the change; the target still carries `data-bench-target` unless it was removed. */
  after: string;
  /** Whether the target is still on the page after the change. */
  kept: boolean;
}

interface Block {
  key: string;
  tag: string;
  /** Semantic class name (rendered as is, renamed, or hashed by the style). */
  role?: string;
  text?: string;
  attrs?: Record<string, string>;
  children?: Block[];
}

interface Style {
  framework: boolean;
  salt: string;
  renamed: boolean;
  wrapped?: string;
}

/** A small seeded generator (mulberry32), so the corpus is the same on every run. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}
type Random = ReturnType<typeof random>;

const ADJECTIVES = [
  'Classic',
  'Modern',
  'Compact',
  'Rugged',
  'Silent',
  'Bright',
  'Wireless',
  'Foldable',
  'Organic',
  'Premium',
  'Travel',
  'Smart',
  'Vintage',
  'Urban',
  'Solar',
];
const NOUNS = [
  'Backpack',
  'Lamp',
  'Kettle',
  'Headphones',
  'Desk',
  'Chair',
  'Bottle',
  'Jacket',
  'Speaker',
  'Notebook',
  'Blender',
  'Watch',
  'Tent',
  'Mug',
  'Camera',
];
const WORDS = (
  'quality design comfort delivery order customers support team years build material product feature simple reliable light strong easy clean fast ' +
  'warranty return shipping price value every daily home office outdoor weekend battery charge water resistant soft steel cotton recycled careful ' +
  'tested made crafted small large family friends gift season winter summer colour finish smooth sturdy quiet powerful efficient'
).split(' ');
const QUESTIONS = [
  'How long does shipping take?',
  'Can I return an item?',
  'Do you ship abroad?',
  'Is there a warranty?',
  'How do I track my order?',
  'Can I change my order?',
  'Do you offer gift cards?',
  'Which payment methods do you accept?',
];
const PLANS = ['Starter', 'Basic', 'Standard', 'Plus', 'Business', 'Enterprise'];
const NAV = ['Home', 'Shop', 'New arrivals', 'Sale', 'Journal', 'About us', 'Contact'];

function sentence(rng: Random, words: number): string {
  const chosen = Array.from({ length: words }, () => rng.pick(WORDS));
  const text = chosen.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

let keyCounter = 0;
const block = (tag: string, role: string | undefined, content: string | Block[], attrs?: Record<string, string>): Block => ({
  key: `k${(keyCounter += 1)}`,
  tag,
  ...(role ? { role } : {}),
  ...(typeof content === 'string' ? { text: content } : { children: content }),
  ...(attrs ? { attrs } : {}),
});

function productCard(rng: Random, name = `${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}`): Block {
  return block('div', 'product-card', [
    // Half the shop's pictures have alt text (the product's name), half are decorative (alt="").
    block('img', 'product-image', [], { alt: rng.next() < 0.5 ? name : '' }),
    block('h3', 'product-title', name),
    block('p', 'product-description', sentence(rng, 8 + rng.int(8))),
    block('span', 'product-price', `$${10 + rng.int(190)}.${rng.pick(['00', '50', '99'])}`),
    block('button', 'add-to-cart', 'Add to cart', { type: 'button' }),
  ]);
}

function site(rng: Random): Block {
  const nav = block('nav', 'site-nav', [
    block(
      'ul',
      'nav-list',
      NAV.slice(0, 4 + rng.int(3)).map((label) =>
        block('li', 'nav-item', [block('a', 'nav-link', label, { href: `/${label.toLowerCase().replace(/ /g, '-')}` })]),
      ),
    ),
  ]);
  const hero = block('section', 'hero', [
    block('h1', 'hero-title', `${rng.pick(ADJECTIVES)} things for ${rng.pick(['every day', 'your home', 'the outdoors', 'busy people'])}`),
    block('p', 'hero-text', sentence(rng, 14)),
    block('a', 'hero-button', 'Shop now', { href: '/shop' }),
  ]);
  const products = block('section', 'products', [
    block('h2', 'section-title', 'Featured products'),
    block(
      'div',
      'product-grid',
      Array.from({ length: 6 + rng.int(4) }, () => productCard(rng)),
    ),
  ]);
  const article = block('article', 'journal', [
    block('h2', 'section-title', `${rng.pick(['Notes on', 'Why we love', 'A guide to'])} ${rng.pick(NOUNS).toLowerCase()}s`),
    ...Array.from({ length: 4 + rng.int(3) }, () => block('p', 'journal-text', sentence(rng, 20 + rng.int(25)))),
  ]);
  const faq = block('section', 'faq', [
    block('h2', 'section-title', 'Questions'),
    block(
      'ul',
      'faq-list',
      [...QUESTIONS]
        .sort(() => rng.next() - 0.5)
        .slice(0, 5)
        .map((question) => block('li', 'faq-item', question)),
    ),
  ]);
  const pricing = block('section', 'pricing', [
    block('h2', 'section-title', 'Plans'),
    block('table', 'plans', [
      block(
        'tbody',
        undefined,
        PLANS.slice(0, 3 + rng.int(3)).map((plan, index) =>
          block('tr', 'plan-row', [
            block('td', 'plan-name', plan),
            block('td', 'plan-price', `$${(index + 1) * 9}/month`),
            block('td', 'plan-feature', sentence(rng, 4)),
          ]),
        ),
      ),
    ]),
  ]);
  const footer = block('footer', 'site-footer', [
    block('p', 'footer-text', `© 2026 ${rng.pick(ADJECTIVES)} Goods. ${sentence(rng, 6)}`),
    block('a', 'footer-link', 'Privacy', { href: '/privacy' }),
  ]);
  return block('body', undefined, [
    block('header', 'site-header', [block('a', 'logo', 'Goods', { href: '/' }), nav]),
    block('main', 'content', [hero, products, article, faq, pricing]),
    footer,
  ]);
}

const hash = (text: string) => {
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0).toString(36);
};

const RENAMES: Record<string, string> = {};
const renamed = (role: string) => (RENAMES[role] ??= role.split('-').reverse().join('-').replace(/^(\w)/, 'x$1'));

function render(root: Block, style: Style, target: string | undefined): string {
  let counter = 0;
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  const out = (node: Block, depth: number): string => {
    const attributes: string[] = [];
    if (node.role) {
      const name = style.framework ? `css-${hash(node.role + style.salt)}` : style.renamed ? renamed(node.role) : node.role;
      attributes.push(`class="${name}"`);
      if (style.framework) attributes.push(`id=":r${(counter += 1).toString(36)}${hash(style.salt).slice(0, 2)}:"`);
      else if (['products', 'faq', 'pricing', 'hero', 'journal'].includes(node.role)) attributes.push(`id="${node.role}"`);
    }
    for (const [name, value] of Object.entries(node.attrs ?? {})) attributes.push(`${name}="${escape(value)}"`);
    if (node.key === target) attributes.push('data-bench-target');
    const open = node.tag === 'body' ? '' : `<${node.tag}${attributes.length ? ` ${attributes.join(' ')}` : ''}>`;
    if (node.tag === 'img') return open;
    const indent = style.framework ? '' : `\n${'  '.repeat(depth + 1)}`;
    const inner =
      node.text !== undefined
        ? escape(node.text)
        : (node.children ?? []).map((child) => `${indent}${out(child, depth + 1)}`).join('') +
          (style.framework ? '' : `\n${'  '.repeat(depth)}`);
    const body =
      style.wrapped && node.key === style.wrapped
        ? `<div${style.framework ? ` class="css-${hash(`wrap${style.salt}`)}"` : ''}>${inner}</div>`
        : inner;
    return node.tag === 'body' ? body : `${open}${body}</${node.tag}>`;
  };
  return `<!doctype html><html><head><meta charset="utf-8"><title>Goods</title></head><body>${out(root, 0)}</body></html>`;
}

/** Every block with its parent, in document order. */
function walk(root: Block, visit: (node: Block, parent: Block | undefined) => void, parent?: Block): void {
  visit(root, parent);
  for (const child of root.children ?? []) walk(child, visit, root);
}

function parentOf(root: Block, key: string): Block | undefined {
  let found: Block | undefined;
  walk(root, (node, parent) => {
    if (node.key === key) found = parent;
  });
  return found;
}

const clone = <T>(value: T): T => structuredClone(value);

/** A fresh copy of a block with new keys (what a page adds, not what it had). */
function copyOf(node: Block): Block {
  const copy = clone(node);
  walk(copy, (child) => {
    child.key = `k${(keyCounter += 1)}`;
  });
  return copy;
}

/** The repeated unit that holds the target: a card, a row, a list item, a paragraph, a section. */
function unitOf(root: Block, key: string): { unit: Block; list: Block } {
  let current = key;
  for (;;) {
    const parent = parentOf(root, current)!;
    const siblings = parent.children ?? [];
    const self = siblings.find((child) => child.key === current)!;
    const alike = siblings.filter((child) => child.tag === self.tag && child.role === self.role).length;
    if (alike >= 3 || parent.tag === 'main' || parent.tag === 'body') return { unit: self, list: parent };
    current = parent.key;
  }
}

function textTargets(root: Block): Block[] {
  const targets: Block[] = [];
  walk(root, (node) => {
    if (node.text !== undefined && node.text.length > 0) targets.push(node);
  });
  return targets;
}

function editText(rng: Random, text: string): string {
  const words = text.split(' ');
  const choice = rng.int(4);
  if (/^\$\d/.test(text)) return text.replace(/\d+/, (digits) => String(Number(digits) + 1 + rng.int(20)));
  if (words.length <= 2 || choice === 0)
    return `${text.replace(/[.?]$/, '')} ${rng.pick(['today', 'now', 'online', 'here'])}${/[.?]$/.test(text) ? text.slice(-1) : ''}`;
  if (choice === 1) {
    const at = rng.int(words.length);
    words[at] = rng.pick(WORDS);
    return words.join(' ');
  }
  if (choice === 2) {
    const at = 1 + rng.int(Math.max(1, text.length - 2));
    return `${text.slice(0, at)}${text[at + 1] ?? ''}${text[at] ?? ''}${text.slice(at + 2)}`;
  }
  words.splice(1 + rng.int(words.length - 1), 0, rng.pick(WORDS));
  return words.join(' ');
}

function moveWithin(rng: Random, list: Block, unit: Block): void {
  const children = list.children!;
  const from = children.indexOf(unit);
  children.splice(from, 1);
  let to = rng.int(children.length + 1);
  if (Math.abs(to - from) < 2) to = from >= 2 ? 0 : children.length;
  children.splice(to, 0, unit);
}

/** A new block like the unit (same tag and role, new text). */
function freshLike(rng: Random, unit: Block): Block {
  if (unit.role === 'product-card') return productCard(rng);
  const copy = copyOf(unit);
  walk(copy, (node) => {
    if (node.text !== undefined)
      node.text =
        node.tag === 'a'
          ? rng.pick(['Gift cards', 'Stores', 'Careers', 'Help'])
          : node.text.includes('$')
            ? `$${rng.int(99)}`
            : sentence(rng, Math.max(2, node.text.split(' ').length));
  });
  return copy;
}

/** One pair of `kind` from `seed`. */
export function makePair(kind: Kind, seed: number): PagePair {
  const rng = random(seed * 7919 + KINDS.indexOf(kind) * 104729);
  const root = site(rng);
  // Mostly an element with text; one in five times (but for text edits) a product picture.
  const pictures: Block[] = [];
  walk(root, (node) => {
    if (node.tag === 'img') pictures.push(node);
  });
  // A look-alike differing by an edit of the target's text needs a text to edit: no pictures there either.
  const textOnly = kind === 'text edited' || kind === 'look-alike before it' || kind === 'look-alike after it';
  const target = !textOnly && rng.next() < 0.2 ? rng.pick(pictures) : rng.pick(textTargets(root).filter((node) => node.tag !== 'body'));
  const salt = `s${seed}`;
  const before: Style = { framework: kind === 'framework re-render' || rng.next() < 0.3, salt, renamed: false };
  const after = clone(root);
  let afterStyle: Style = { ...before };
  let kept = true;
  const { unit, list } = unitOf(after, target.key);
  let name = target.tag === 'img' ? `img alt="${target.attrs?.alt ?? ''}"` : `${target.tag} "${target.text!.slice(0, 30)}"`;
  switch (kind) {
    case 'text edited': {
      walk(after, (node) => {
        if (node.key === target.key) node.text = editText(rng, node.text!);
      });
      break;
    }
    case 'element moved': {
      moveWithin(rng, list, unit);
      name += ` (its ${unit.role ?? unit.tag} moved)`;
      break;
    }
    case 'siblings inserted': {
      const children = list.children!;
      const count = 1 + rng.int(3);
      const at = rng.next() < 0.7 ? children.indexOf(unit) : 0;
      children.splice(at, 0, ...Array.from({ length: count }, () => freshLike(rng, children[at]!)));
      name += ` (${count} before)`;
      break;
    }
    case 'classes renamed': {
      afterStyle = { ...before, framework: false, renamed: true };
      before.framework = false;
      break;
    }
    case 'framework re-render': {
      afterStyle = { ...before, salt: `${salt}r`, wrapped: rng.next() < 0.5 ? list.key : undefined };
      break;
    }
    case 'element removed': {
      const whole = rng.next() < 0.5 || unit.key === target.key;
      const parent = whole ? list : parentOf(after, target.key)!;
      parent.children = parent.children!.filter((child) => child.key !== (whole ? unit.key : target.key));
      kept = false;
      name += whole && unit.key !== target.key ? ` (its ${unit.role ?? unit.tag})` : '';
      break;
    }
    case 'exact copy beside it': {
      const children = list.children!;
      children.splice(children.indexOf(unit), 0, copyOf(unit));
      name += ` (its ${unit.role ?? unit.tag} copied before it)`;
      break;
    }
    case 'look-alike added': {
      // A copy of the target's unit (card, row, item, section) with the target's text and its other texts changed, two or more places away.
      const lookAlike = copyOf(unit);
      walk(lookAlike, (node) => {
        if (node.text !== undefined && node.text !== target.text) node.text = freshLike(rng, node).text ?? node.text;
      });
      const children = list.children!;
      const from = children.indexOf(unit);
      const spots = children.map((_, index) => index).filter((index) => Math.abs(index - from) >= 2 && Math.abs(index - (from + 1)) >= 2);
      const where = spots.length ? rng.pick(spots) : children.length;
      if (!spots.length) {
        // Nowhere in its own list (the header or the footer): the copy goes into the main part, away from the original.
        const main = after.children!.find((child) => child.tag === 'main')!.children!;
        if (unit.tag === 'header') main.push(lookAlike);
        else main.unshift(lookAlike);
      } else children.splice(where, 0, lookAlike);
      name += ' (a copy with the same text elsewhere)';
      break;
    }
    case 'look-alike before it':
    case 'look-alike after it': {
      // A copy of the target's unit right before (or after) it, the target's own text edited a
      // little and its other texts new (another product's card, another question of the list):
      // before it, a positional selector now names the look-alike; after it, the look-alike has
      // the text that followed the original. The unchanged original is still there. Where the
      // unit is the element itself (a paragraph), the two split the stored context between them
      // and only the unchanged text tells the original. A copy whose other texts stayed would be
      // the original edited in place with a copy after it, which no anchor can tell apart.
      const lookAlike = copyOf(unit);
      walk(lookAlike, (node) => {
        if (node.text === undefined) return;
        node.text = node.text === target.text ? editText(rng, node.text) : (freshLike(rng, node).text ?? node.text);
      });
      const children = list.children!;
      const following = kind === 'look-alike after it';
      children.splice(children.indexOf(unit) + (following ? 1 : 0), 0, lookAlike);
      name += ` (a copy with its text edited, right ${following ? 'after' : 'before'} it)`;
      break;
    }
  }
  return { kind, name, before: render(root, before, target.key), after: render(after, afterStyle, kept ? target.key : undefined), kept };
}

/** `perKind` pairs of every kind, from seed `first` on. */
export function makeCorpus(perKind: number, first = 1): PagePair[] {
  return KINDS.flatMap((kind) => Array.from({ length: perKind }, (_, index) => makePair(kind, first + index)));
}
