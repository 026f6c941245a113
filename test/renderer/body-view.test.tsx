// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyView } from '../../src/renderer/src/components/body-view';
import { TrustBadge } from '../../src/renderer/src/components/trust-badge';

afterEach(cleanup);

describe('BodyView', () => {
  it('offers JSON, Raw and Hex for a JSON body, JSON first', () => {
    render(<BodyView payload={'{"type":"charge.succeeded"}'} encoding="utf8" contentType="application/json" />);
    const tabs = screen.getAllByRole('tab').map((tab) => tab.textContent);
    expect(tabs).toEqual(['JSON', 'Raw', 'Hex']);
    expect(screen.getByRole('tab', { name: 'JSON' }).getAttribute('aria-selected')).toBe('true');
    expect(screen.getByText('"charge.succeeded"')).toBeTruthy();
    fireEvent.click(screen.getByRole('tab', { name: 'Raw' }));
    expect(screen.getByLabelText('Body raw').textContent).toBe('{"type":"charge.succeeded"}');
    fireEvent.click(screen.getByRole('tab', { name: 'Hex' }));
    expect(screen.getByLabelText('Body hex dump').textContent).toMatch(/^00000000 {2}7b 22 74 79/);
  });

  it('moves between tabs with the arrow keys', () => {
    render(<BodyView payload={'{"a":1}'} encoding="utf8" contentType="application/json" />);
    fireEvent.keyDown(screen.getByRole('tablist'), { key: 'ArrowRight' });
    expect(screen.getByRole('tab', { name: 'Raw' }).getAttribute('aria-selected')).toBe('true');
    fireEvent.keyDown(screen.getByRole('tablist'), { key: 'ArrowLeft' });
    fireEvent.keyDown(screen.getByRole('tablist'), { key: 'ArrowLeft' });
    expect(screen.getByRole('tab', { name: 'Hex' }).getAttribute('aria-selected')).toBe('true');
  });

  it('decodes form bodies into fields', () => {
    render(<BodyView payload={'command=%2Fdeploy&text=api'} encoding="utf8" contentType="application/x-www-form-urlencoded" />);
    expect(screen.getAllByRole('tab').map((tab) => tab.textContent)).toEqual(['Form', 'Raw', 'Hex']);
    const table = screen.getByRole('table', { name: 'Body form fields' });
    expect(table.textContent).toContain('command/deploy');
  });

  it('shows binary bodies as hex, never as mangled text', () => {
    render(<BodyView payload={btoa(String.fromCharCode(0xff, 0xfe, 0x00))} encoding="base64" contentType="application/octet-stream" />);
    expect(screen.getByText(/not valid UTF-8/)).toBeTruthy();
    fireEvent.click(screen.getByRole('tab', { name: 'Hex' }));
    expect(screen.getByLabelText('Body hex dump').textContent).toContain('ff fe 00');
  });
});

describe('TrustBadge', () => {
  it('always says the trust mode in words', () => {
    render(
      <>
        <TrustBadge mode="signed" />
        <TrustBadge mode="token" />
        <TrustBadge mode="open" />
        <TrustBadge mode="queue" />
      </>,
    );
    for (const mode of ['signed', 'token', 'open', 'queue']) {
      const badge = screen.getByText(mode);
      expect(badge.className).toContain(`trust-${mode}`);
      expect(badge.getAttribute('title')).toBeTruthy();
    }
  });
});
