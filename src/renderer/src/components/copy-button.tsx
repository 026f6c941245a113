import { useEffect, useRef, useState } from 'react';

/** Copies `text` (or what `text()` resolves to); says so in words (announced to screen readers), then resets. */
export function CopyButton({ text, label, idleText = 'Copy', className }: { text: string | (() => Promise<string>); label: string; idleText?: string; className?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const copy = async () => {
    let ok = false;
    let value: string;
    try {
      value = typeof text === 'string' ? text : await text();
    } catch {
      setState('failed');
      return;
    }
    try {
      await navigator.clipboard.writeText(value);
      ok = true;
    } catch {
      ok = copyWithSelection(value);
    }
    setState(ok ? 'copied' : 'failed');
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setState('idle'), 1600);
  };

  return (
    <button type="button" className={`copy-button ${className ?? ''}`} onClick={() => void copy()} aria-label={label}>
      <span aria-live="polite">{state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : idleText}</span>
    </button>
  );
}

/** Clipboard API needs a secure context or permission; plain http on 127.0.0.1 may lack it. */
function copyWithSelection(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** A value people copy: shown in monospace with its copy button. */
export function CopyField({ label, value, multiline = false }: { label: string; value: string; multiline?: boolean }) {
  return (
    <div className="copy-field">
      <span className="copy-field-label">{label}</span>
      <div className="copy-field-row">
        {multiline ? <pre className="copy-field-value" aria-label={label}>{value}</pre> : <code className="copy-field-value" aria-label={label}>{value}</code>}
        <CopyButton text={value} label={`Copy ${label}`} />
      </div>
    </div>
  );
}
