// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { JSON_TREE_PAGE, JsonTree, tryParseJson } from '../../src/renderer/src/components/json-tree';

afterEach(cleanup);

describe('JsonTree', () => {
  const value = { action: 'opened', pull_request: { number: 42, head: { ref: 'feature/x', sha: 'abc' }, draft: false, merged_at: null } };

  it('opens the first two levels and collapses deeper ones', () => {
    render(<JsonTree value={value} />);
    expect(screen.getByText('"opened"')).toBeTruthy();
    expect(screen.getByText('42')).toBeTruthy();
    expect(screen.getByText('false')).toBeTruthy();
    expect(screen.getByText('null')).toBeTruthy();
    expect(screen.queryByText('"feature/x"')).toBeNull();
    const head = screen.getByRole('button', { name: /Expand head \(2 keys\)/ });
    expect(head.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(head);
    expect(screen.getByText('"feature/x"')).toBeTruthy();
    expect(screen.getByRole('button', { name: /Collapse head/ }).getAttribute('aria-expanded')).toBe('true');
  });

  it('collapses a node on click and shows its size', () => {
    render(<JsonTree value={value} />);
    fireEvent.click(screen.getByRole('button', { name: /Collapse pull_request/ }));
    expect(screen.queryByText('42')).toBeNull();
    expect(screen.getByText(/4 keys/)).toBeTruthy();
  });

  it('pages long arrays instead of rendering them whole', () => {
    const items = Array.from({ length: JSON_TREE_PAGE + 30 }, (_, i) => i * 1000 + 7);
    render(<JsonTree value={{ items }} />);
    expect(screen.getByText(String((JSON_TREE_PAGE - 1) * 1000 + 7))).toBeTruthy();
    expect(screen.queryByText(String(JSON_TREE_PAGE * 1000 + 7))).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Show 30 more of 30' }));
    expect(screen.getByText(String((JSON_TREE_PAGE + 29) * 1000 + 7))).toBeTruthy();
  });

  it('renders scalars and strings safely (no HTML interpretation)', () => {
    render(<JsonTree value={'<img src=x onerror=alert(1)>'} />);
    expect(screen.getByText('"<img src=x onerror=alert(1)>"')).toBeTruthy();
    expect(document.querySelector('img')).toBeNull();
  });

  it('tells JSON from non-JSON', () => {
    expect(tryParseJson(' {"a":1}')).toEqual({ value: { a: 1 } });
    expect(tryParseJson('a=1&b=2')).toBeUndefined();
    expect(tryParseJson('{broken')).toBeUndefined();
  });
});
