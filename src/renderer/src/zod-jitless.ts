import { z } from 'zod';

// zod compiles object parsers with new Function() unless told not to, and probes for it when a
// schema is *built*. The CSP (script-src 'self') forbids eval, so even the probe is reported as
// a violation. main.tsx imports this module first, before any schema exists.
z.config({ jitless: true });
