import { readMarkupPageLayout } from '../../shared/domain/markups/renders.js';
import { ok, operation } from '../../shared/http/route.js';
import { MAX_LAYOUT_ELEMENTS, MAX_LOCATED_PATHS, MAX_SCREENSHOT_HEIGHT } from '../../shared/render/page-screenshot.js';
import { PageLayoutParams, PageLayoutSchema } from './schemas.js';

export const getPageLayoutOperation = operation({
  operationId: 'getMarkupPageLayout',
  summary: 'Get a page screenshot layout',
  description:
    "Where the elements of a webpage markup's full-page screenshot at one view mode are (its `pageScreenshots[].layoutUrl`), in CSS pixels of the screenshot: " +
    `\`elements\`, the page's visible elements by canonical CSS path (tag names and :nth-of-type; at most ${MAX_LAYOUT_ELEMENTS}, in document order, \`truncated\` when more were left out; none below ${MAX_SCREENSHOT_HEIGHT} px, where screenshots end), ` +
    `and \`located\`, the boxes of other selectors the markup's threads name (at most ${MAX_LOCATED_PATHS} per render), null where no visible element matches. ` +
    "A thread pins at its first element's box plus its offsets (percentages of that box). 404 until the view mode's screenshot is ready.",
  auth: 'apiKey',
  permission: 'markup:read',
  params: PageLayoutParams,
  responses: [{ status: 200, description: 'The layout', schema: PageLayoutSchema }],
  handle: async ({ principal, params }) => {
    const layout = await readMarkupPageLayout(principal, params.id, params.viewModeId);
    return ok({
      viewModeId: params.viewModeId,
      width: layout.width,
      height: layout.height,
      truncated: layout.truncated,
      elements: layout.elements,
      located: layout.located,
    });
  },
});
