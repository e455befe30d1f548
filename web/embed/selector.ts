/**
 * A CSS selector that `document.querySelector` resolves to exactly `element` (DESIGN.md
 * "Embeddable client", `elements[0].elementPath`). Self-contained and behind this one function so a
 * library generator (such as @medv/finder) can replace it: from the element up, each step is the
 * tag with `:nth-of-type` where siblings share it, stopping at the nearest ancestor with an id that
 * is unique on the page and does not look generated (React's `:r1:`, long numbers, UUIDs).
 */
export function selectorFor(element: Element): string {
  const root = element.ownerDocument;
  const steps: string[] = [];
  let current: Element | null = element;
  while (current && current !== root.documentElement) {
    const id = current.getAttribute('id');
    if (id && stableId(id) && root.querySelectorAll(`#${CSS.escape(id)}`).length === 1) {
      steps.unshift(`#${CSS.escape(id)}`);
      break;
    }
    steps.unshift(stepOf(current));
    current = current.parentElement;
  }
  if (current === root.documentElement) steps.unshift('html');
  const selector = steps.join(' > ');
  if (root.querySelector(selector) === element) return selector;
  // An id shared with an element in a shadow root or changed meanwhile: the plain path from html.
  const path: string[] = [];
  for (let node: Element | null = element; node && node !== root.documentElement; node = node.parentElement) path.unshift(stepOf(node));
  return ['html', ...path].join(' > ');
}

function stepOf(element: Element): string {
  const tag = CSS.escape(element.localName);
  const parent = element.parentElement;
  if (!parent) return tag;
  let index = 0;
  let count = 0;
  for (const sibling of parent.children) {
    if (sibling.localName !== element.localName) continue;
    count += 1;
    if (sibling === element) index = count;
  }
  return count > 1 ? `${tag}:nth-of-type(${index})` : tag;
}

/** Ids frameworks generate anew on each render are no anchor. */
function stableId(id: string): boolean {
  return !/\d{4,}|^:|[0-9a-f]{8}-[0-9a-f]{4}-|^(ember|react|radix|headlessui|mui)[-_]?\d*/i.test(id);
}
