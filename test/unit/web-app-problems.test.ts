import { describe, expect, it } from 'vitest';
import { forPeople } from '../../web/app/api.js';

describe("the review app shows a problem's detail in people's words", () => {
  it('names a refused field by its name instead of its JSON pointer', () => {
    expect(forPeople('/body/url: must be an absolute http or https URL')).toBe('url: must be an absolute http or https URL');
    expect(forPeople('/params/id: must be a UUID')).toBe('id: must be a UUID');
    expect(forPeople('/body/elements/0/path: must be a CSS selector')).toBe('path: must be a CSS selector');
  });

  it('leaves every other detail as the API wrote it', () => {
    expect(forPeople('Markup not found.')).toBe('Markup not found.');
    expect(forPeople('A folder named /body/x: already exists')).toBe('A folder named /body/x: already exists');
  });
});
