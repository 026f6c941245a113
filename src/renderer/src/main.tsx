import './zod-jitless';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createClient } from './api/client';
import { App } from './app';
import './styles.css';

// The token is taken from the fragment (and scrubbed from the address bar) before anything renders.
const client = createClient();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App client={client} />
  </StrictMode>,
);
