/**
 * Path-template matching as API Gateway HTTP APIs do it, in one place: the local gateway routes
 * requests with it and the `$default` route answers 405 with it, so the two cannot disagree about
 * which paths exist.
 */

/** What a template is matched by: a method and an API Gateway path such as `/api/v2/items/{id}`. */
export interface RouteTemplate {
  method: string;
  path: string;
}

export interface PathMatch<T> {
  route: T;
  /** Path parameters by name, percent-decoded (kept as sent when they do not decode). */
  params: Record<string, string>;
}

export interface RouteMatcher<T> {
  /** The most specific route for this method and path (more literal segments win), or undefined. */
  match(method: string, path: string): PathMatch<T> | undefined;
  /** The methods of every route whose template fits the path, each once, in table order. */
  methodsAt(path: string): string[];
}

interface Compiled<T> {
  route: T;
  segments: string[];
  literalCount: number;
}

const segmentsOf = (path: string): string[] => path.split('/').filter(Boolean);
const isParam = (segment: string): boolean => segment.startsWith('{');

/** The parameters of `parts` under `segments`, or undefined when they do not fit: one segment per `{param}`. */
function fit(segments: readonly string[], parts: readonly string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const part = parts[i]!;
    if (isParam(segment)) params[segment.slice(1, -1)] = safeDecode(part);
    else if (segment !== part) return undefined;
  }
  return params;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Compiles a route table for matching. Empty segments are ignored, so a `{param}` only ever
 * takes a non-empty segment; among templates that fit, the one with more literal segments wins
 * and ties keep table order (`/markups/usage` before `/markups/{id}`, as API Gateway prefers).
 */
export function compileTemplates<T extends RouteTemplate>(routes: readonly T[]): RouteMatcher<T> {
  const inOrder: Compiled<T>[] = routes.map((route) => {
    const segments = segmentsOf(route.path);
    return { route, segments, literalCount: segments.filter((segment) => !isParam(segment)).length };
  });
  const bySpecificity = [...inOrder].sort((a, b) => b.literalCount - a.literalCount);
  return {
    match(method, path) {
      const parts = segmentsOf(path);
      for (const candidate of bySpecificity) {
        if (candidate.route.method !== method) continue;
        const params = fit(candidate.segments, parts);
        if (params) return { route: candidate.route, params };
      }
      return undefined;
    },
    methodsAt(path) {
      const parts = segmentsOf(path);
      return [...new Set(inOrder.filter((candidate) => fit(candidate.segments, parts)).map((candidate) => candidate.route.method))];
    },
  };
}

/** True when a concrete path fits an API Gateway template such as `/api/v2/items/{id}`. */
export function templateMatches(template: string, path: string): boolean {
  return fit(segmentsOf(template), segmentsOf(path)) !== undefined;
}
