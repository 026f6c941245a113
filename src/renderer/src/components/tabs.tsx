import { useId, useRef, type ReactNode } from 'react';

/**
 * WAI-ARIA tabs: arrow keys move between tabs, the panel is labelled by its tab. `children` is
 * what the selected tab shows (a caller that must keep the other panels mounted hides them).
 */
export function Tabs<T extends string>({
  label,
  tabs,
  selected,
  onSelect,
  className,
  children,
}: {
  label: string;
  tabs: readonly { id: T; label: string }[];
  selected: T;
  onSelect: (id: T) => void;
  className?: string;
  children: ReactNode;
}) {
  const base = useId();
  const refs = useRef(new Map<T, HTMLButtonElement>());
  const move = (delta: number) => {
    const index = tabs.findIndex((tab) => tab.id === selected);
    const next = tabs[(index + delta + tabs.length) % tabs.length]!;
    onSelect(next.id);
    refs.current.get(next.id)?.focus();
  };
  return (
    <div className={className ? `tabs ${className}` : 'tabs'}>
      <div
        role="tablist"
        aria-label={label}
        className="tab-list"
        onKeyDown={(event) => {
          if (event.key === 'ArrowRight') move(1);
          else if (event.key === 'ArrowLeft') move(-1);
        }}
      >
        {tabs.map((tab) => (
          <button
            key={tab.id}
            ref={(element) => {
              if (element) refs.current.set(tab.id, element);
              else refs.current.delete(tab.id);
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${tab.id}`}
            aria-selected={tab.id === selected}
            aria-controls={`${base}-panel`}
            tabIndex={tab.id === selected ? 0 : -1}
            className="tab"
            onClick={() => onSelect(tab.id)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${selected}`} className="tab-panel">
        {children}
      </div>
    </div>
  );
}
