import { createRoot } from 'react-dom/client';

// Placeholder: the inspector UI is its own issue (#5).
createRoot(document.getElementById('root')!).render(<h1>switchboard</h1>);
