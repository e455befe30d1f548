import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

/**
 * A modal dialog on the native `<dialog>` (role dialog, named by its heading; the page behind is
 * inert, Tab stays inside). Escape or "Close" calls `onClose`; when it goes, focus returns to
 * `returnFocus()` if given, else to what had focus when it opened; if that is gone (a deleted
 * thread's pin), to `fallbackFocus()`.
 */
export function Dialog({
  title,
  onClose,
  returnFocus,
  fallbackFocus,
  children,
  class: className,
}: {
  title: string;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
  fallbackFocus?: () => HTMLElement | null | undefined;
  children: ComponentChildren;
  class?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const returnTo = useRef(returnFocus);
  returnTo.current = returnFocus;
  const fallback = useRef(fallbackFocus);
  fallback.current = fallbackFocus;

  useEffect(() => {
    const dialog = ref.current!;
    const previous = deepActiveElement();
    if (!dialog.open) dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      // After this render is committed, so a pin created meanwhile can take the focus.
      setTimeout(() => {
        const target = returnTo.current?.() ?? previous;
        if (target?.isConnected) target.focus();
        else fallback.current?.()?.focus();
      }, 0);
    };
  }, []);

  return (
    <dialog
      ref={ref}
      class={`board-dialog${className ? ` ${className}` : ''}`}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <div class="board-dialog-head">
        <h2 id={titleId} tabIndex={-1}>
          {title}
        </h2>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      {children}
    </dialog>
  );
}

/**
 * What has the focus, looking into open shadow roots: inside the embeddable client the document's
 * active element is only its host element, and focus given back to the host lands on the body.
 */
function deepActiveElement(): HTMLElement | null {
  let active: Element | null = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active instanceof HTMLElement ? active : null;
}
