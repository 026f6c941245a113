/**
 * The replay target guard (DESIGN §7). A replay is a POST that switchboard makes on request of
 * the UI, an MCP client (an AI agent that may have read attacker-written webhook payloads) or a
 * forward rule, so the target is untrusted input. This file defends against:
 *
 * - SSRF to anything but the developer's own machine: only hosts in `replay.allow_hosts`
 *   (default: loopback) are reachable; every IP spelling (`2130706433`, `0x7f.1`, `127.1`,
 *   `[::ffff:127.0.0.1]`) is normalized before it is compared.
 * - DNS rebinding: a name is checked again on the addresses its lookup returns at connect time,
 *   and the connected socket's peer is checked once more, so an answer that changes between the
 *   check and the connection cannot slip through. IP literals skip Node's lookup hook, so they
 *   are checked before connecting.
 * - Cloud metadata and "any" addresses, always refused even when allow-listed: link-local
 *   169.254.0.0/16 and fe80::/10 (169.254.169.254, fd00:ec2::254, Azure's 168.63.129.16,
 *   Alibaba's 100.100.100.200), and 0.0.0.0 / `::`, which Linux quietly connects to localhost.
 * - Sending events back to the providers themselves (posting a Slack payload to hooks.slack.com
 *   would post a message): their hosts are refused even when allow-listed.
 * Redirects are never followed (the engine reports the 3xx), so none of this can be walked around
 * by a Location header.
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';

export class TargetRefusedError extends Error {
  readonly hint: string;

  constructor(message: string, hint: string) {
    super(message);
    this.name = 'TargetRefusedError';
    this.hint = hint;
  }
}

const ALLOW_HINT = 'replay targets must be in replay.allow_hosts (Settings → Replay); by default only this machine';
const ALWAYS_HINT = 'this address is refused even when allow-listed: replays are for local consumers';

/** Domains of webhook senders (and their subdomains): never a replay target. */
export const PROVIDER_DOMAINS = [
  'github.com',
  'githubusercontent.com',
  'stripe.com',
  'stripe.network',
  'slack.com',
  'slack-edge.com',
  'shopify.com',
  'myshopify.com',
  'svix.com',
  'clerk.com',
  'clerk.dev',
  'resend.com',
  'linear.app',
  'paddle.com',
  'discord.com',
  'discordapp.com',
  'twilio.com',
  'gitlab.com',
  'docker.com',
  'docker.io',
] as const;

/** Names that resolve to instance metadata on cloud machines. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** Lowercase, without brackets or a trailing dot: the form every comparison uses. */
function bareHost(host: string): string {
  let out = host.trim().toLowerCase();
  if (out.startsWith('[') && out.endsWith(']')) out = out.slice(1, -1);
  if (out.endsWith('.')) out = out.slice(0, -1);
  return out;
}

/**
 * One spelling per address, or null for a name. IPv4 in dotted-quad; IPv6 as eight hex groups.
 * The WHATWG URL parser does the heavy lifting (it is what turned the target into a hostname in
 * the first place, so both sides agree): `2130706433`, `0x7f.1`, `127.1` → 127.0.0.1. IPv6 that
 * embeds an IPv4 address (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, the deprecated
 * compatible `::a.b.c.d`) is judged as that IPv4 address.
 */
export function canonicalAddress(host: string): string | null {
  const bare = bareHost(host);
  if (bare === '') return null;
  if (isIP(bare) === 6 || bare.includes(':')) {
    let compressed: string;
    try {
      compressed = new URL(`http://[${bare.split('%')[0]}]/`).hostname.slice(1, -1);
    } catch {
      return null;
    }
    const groups = expandIpv6(compressed);
    if (!groups) return null;
    const embedded = embeddedIpv4(groups);
    return embedded ?? groups.map((group) => group.toString(16)).join(':');
  }
  let hostname: string;
  try {
    hostname = new URL(`http://${bare}/`).hostname;
  } catch {
    return null;
  }
  return isIP(hostname) === 4 ? hostname : null;
}

function expandIpv6(compressed: string): number[] | null {
  const [head = '', tail] = compressed.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return null;
  const groups = [...left, ...new Array<number>(fill).fill(0), ...right];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

function embeddedIpv4(groups: number[]): string | null {
  const [a, b, c, d, e, f, g, h] = groups as [number, number, number, number, number, number, number, number];
  const low = `${g >> 8}.${g & 0xff}.${h >> 8}.${h & 0xff}`;
  const zeroPrefix = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (zeroPrefix && f === 0xffff) return low; // IPv4-mapped
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return low; // NAT64
  if (zeroPrefix && f === 0 && g !== 0) return low; // IPv4-compatible (deprecated); not :: or ::1
  return null;
}

const octets = (ipv4: string) => ipv4.split('.').map(Number) as [number, number, number, number];

export function isLoopbackAddress(address: string): boolean {
  return address.includes(':') ? address === '0:0:0:0:0:0:0:1' : octets(address)[0] === 127;
}

/** Why an address is refused whatever the allow list says, or null. Takes a canonical address. */
export function alwaysRefusedReason(address: string): string | null {
  if (address.includes(':')) {
    const first = Number.parseInt(address.split(':')[0]!, 16);
    if (address === '0:0:0:0:0:0:0:0') return 'the unspecified address :: (it reaches this machine by accident, not by intent)';
    if ((first & 0xffc0) === 0xfe80) return 'a link-local address';
    if (address === 'fd00:ec2:0:0:0:0:0:254') return 'the AWS instance metadata address';
    if ((first & 0xff00) === 0xff00) return 'a multicast address';
    return null;
  }
  const [a, b] = octets(address);
  if (a === 0) return 'an unspecified 0.x.x.x address (0.0.0.0 reaches this machine by accident, not by intent)';
  if (a === 169 && b === 254) return 'a link-local address (cloud instance metadata lives at 169.254.169.254)';
  if (address === '168.63.129.16' || address === '100.100.100.200') return 'a cloud platform metadata address';
  if (a >= 224) return 'a multicast or reserved address';
  return null;
}

function providerDomain(host: string): string | undefined {
  return PROVIDER_DOMAINS.find((domain) => host === domain || host.endsWith(`.${domain}`));
}

/** `localhost` and `*.localhost` must mean this machine (RFC 6761), whatever DNS says. */
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * The static check, on the host as written in the target URL (before any DNS). Throws
 * TargetRefusedError; returns the canonical address for an IP literal, else null.
 */
export function checkTargetHost(host: string, allowHosts: readonly string[]): string | null {
  const bare = bareHost(host);
  const domain = providerDomain(bare);
  if (domain) {
    throw new TargetRefusedError(
      `${bare} belongs to a webhook provider (${domain}); replaying there would send the event back to the provider`,
      'replay to your local consumer instead, e.g. http://localhost:3000/webhooks',
    );
  }
  if (METADATA_NAMES.has(bare)) throw new TargetRefusedError(`${bare} is a cloud metadata service name`, ALWAYS_HINT);
  const address = canonicalAddress(bare);
  if (address !== null) {
    const reason = alwaysRefusedReason(address);
    if (reason) throw new TargetRefusedError(`${host} is ${reason}`, ALWAYS_HINT);
    const allowed = allowHosts.some((entry) => canonicalAddress(entry) === address);
    if (!allowed) throw new TargetRefusedError(`the address ${host}${address !== bare ? ` (${address})` : ''} is not in replay.allow_hosts`, ALLOW_HINT);
    return address;
  }
  const allowed = allowHosts.some((entry) => canonicalAddress(entry) === null && bareHost(entry) === bare);
  if (!allowed) throw new TargetRefusedError(`the host ${bare} is not in replay.allow_hosts`, ALLOW_HINT);
  return null;
}

/** The connect-time check on an address a name resolved to (or a socket's peer). */
export function checkResolvedAddress(host: string, resolved: string): void {
  const bare = bareHost(host);
  const address = canonicalAddress(resolved);
  if (address === null) throw new TargetRefusedError(`${bare} resolved to something that is not an address (${resolved})`, ALWAYS_HINT);
  const reason = alwaysRefusedReason(address);
  if (reason) throw new TargetRefusedError(`${bare} resolved to ${resolved}, ${reason}`, ALWAYS_HINT);
  if (isLocalhostName(bare) && !isLoopbackAddress(address)) {
    throw new TargetRefusedError(`${bare} resolved to ${resolved}, which is not a loopback address`, 'fix the hosts file: localhost must mean this machine');
  }
}

export interface GuardedConnectorOptions {
  /** Read on every connection, so an allow-list edit applies at once. */
  allowHosts: () => readonly string[];
  connectTimeoutMs: () => number;
  /** DNS for target names; injectable so tests can play a rebinding resolver. */
  lookup?: LookupFunction;
}

/**
 * An undici `connect` function that runs the guard where it cannot be raced: on the host undici
 * is about to connect to, on every address the lookup returns (before a socket is opened to it),
 * and on the connected socket's peer address.
 */
export function guardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const baseLookup: LookupFunction = options.lookup ?? (dnsLookup as LookupFunction);
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    baseLookup(hostname, lookupOptions, (error, address, family) => {
      if (error) return callback(error, address, family);
      const answers = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
      try {
        for (const answer of answers) checkResolvedAddress(hostname, answer);
      } catch (refused) {
        return callback(refused as Error, address, family);
      }
      callback(null, address, family);
    });
  };
  const connectors = new Map<number, buildConnector.connector>();
  const connectorFor = (timeoutMs: number) => {
    let connector = connectors.get(timeoutMs);
    if (!connector) {
      connector = buildConnector({ timeout: timeoutMs, lookup });
      connectors.set(timeoutMs, connector);
    }
    return connector;
  };

  return (connectOptions, callback) => {
    try {
      // Again here, not only before the request: an IP literal never reaches the lookup hook.
      checkTargetHost(connectOptions.hostname, options.allowHosts());
    } catch (refused) {
      return callback(refused as Error, null);
    }
    connectorFor(options.connectTimeoutMs())(connectOptions, (error, socket) => {
      if (error) return callback(error, null);
      try {
        checkResolvedAddress(connectOptions.hostname, socket.remoteAddress ?? '');
      } catch (refused) {
        socket.destroy();
        return callback(refused as Error, null);
      }
      callback(null, socket);
    });
  };
}
