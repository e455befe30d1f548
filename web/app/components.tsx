import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** A failed request, in words: the problem's `detail`, announced to screen readers. */
export function ErrorMessage({ detail }: { detail: string }) {
  return (
    <p class="message message-error" role="alert">
      {detail}
    </p>
  );
}

export function Loading({ label }: { label: string }) {
  return (
    <p class="message" role="status" aria-live="polite">
      {label}
    </p>
  );
}

/** A screen's heading, focused when the screen appears, so keyboard and screen-reader users start there. */
export function ScreenHeading({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  // The tab says which screen it is (WCAG 2.4.2), and the app's name again when the screen goes.
  useEffect(() => {
    const heading = ref.current?.textContent?.trim();
    if (!heading) return;
    document.title = `${heading} · Review Board`;
    return () => {
      document.title = 'Review Board';
    };
  });
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}
