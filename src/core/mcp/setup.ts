import { KeyedRateLimits } from '../rate-limit.js';
import type { Services } from '../services.js';
import type { McpDeps } from './deps.js';
import { McpSessions } from './sessions.js';

/** Per bearer token, across its sessions: a burst of 5 replays or test events, then one every 2 s (DESIGN §6). */
export const MCP_REPLAY_BURST = 5;
export const MCP_REPLAYS_PER_SECOND = 0.5;

/** Mounts the MCP endpoint on the control port (`/mcp`) and closes its sessions on stop. */
export function setupMcp(sb: Services): McpSessions {
  const sessions = new McpSessions(mcpDeps(sb), {
    rateLimits: new KeyedRateLimits({ capacity: MCP_REPLAY_BURST, refillPerSecond: MCP_REPLAYS_PER_SECOND, now: sb.now }),
    now: sb.now,
  });
  sb.control.mount('/mcp', sessions.handle);
  sb.onStop('mcp sessions', () => sessions.close());
  return sessions;
}

export function mcpDeps(sb: Services): McpDeps {
  return {
    // Read through the switchboard at call time: both exist only while it is started.
    get store() {
      return sb.store;
    },
    get replays() {
      return sb.replays;
    },
    get testEvents() {
      return sb.testEvents;
    },
    receiverUrl: () => sb.url.receiver,
    get suites() {
      return sb.suites;
    },
    get shapes() {
      return sb.shapes;
    },
    bus: sb.bus,
    providers: sb.providers,
    logger: sb.logger,
    version: sb.version,
  };
}
