// node --import ./fs-glob-sync.mjs …: registers fs-glob-sync-hooks.mjs (see there for why).
import { register } from 'node:module';

register('./fs-glob-sync-hooks.mjs', import.meta.url);
