import { describe, expect, it } from 'vitest';
import { joinFragment, paramsFromHash, screenFromHash, splitFragment } from '../../src/renderer/src/lib/nav';

describe('view addresses', () => {
  it('reads a screen and its params from the fragment', () => {
    expect(screenFromHash('#/providers')).toBe('providers');
    expect(screenFromHash('#/events?provider=github&event=4')).toBe('events');
    expect(screenFromHash('#/nowhere?x=1')).toBe('events');
    expect(screenFromHash('')).toBe('events');
    expect(paramsFromHash('#/events?type=pull_request&search=a%26b').get('search')).toBe('a&b');
  });

  it('keeps the bare #token=… form and the view form apart, and writes them back', () => {
    const bare = splitFragment('#token=abc&x=1');
    expect(bare.path).toBe('');
    expect(bare.params.get('token')).toBe('abc');
    expect(joinFragment(bare.path, bare.params)).toBe('#token=abc&x=1');
    const view = splitFragment('#/events?event=42&token=abc');
    expect(view.path).toBe('/events');
    view.params.delete('token');
    expect(joinFragment(view.path, view.params)).toBe('#/events?event=42');
    expect(joinFragment('/events', new URLSearchParams())).toBe('#/events');
    expect(joinFragment('', new URLSearchParams())).toBe('');
  });
});
