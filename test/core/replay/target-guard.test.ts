import { describe, expect, it } from 'vitest';
import {
  alwaysRefusedReason,
  canonicalAddress,
  checkResolvedAddress,
  checkTargetHost,
  TargetRefusedError,
} from '../../../src/core/replay/target-guard.js';

describe('canonicalAddress', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['2852039166', '169.254.169.254'],
    ['[::ffff:127.0.0.1]', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
    ['::127.0.0.1', '127.0.0.1'],
    ['::1', '0:0:0:0:0:0:0:1'],
    ['[0:0:0:0:0:0:0:1]', '0:0:0:0:0:0:0:1'],
    ['::', '0:0:0:0:0:0:0:0'],
    ['FD00:EC2::254', 'fd00:ec2:0:0:0:0:0:254'],
    ['fe80::1%eth0', 'fe80:0:0:0:0:0:0:1'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalAddress(input)).toBe(expected);
  });

  it.each(['localhost', 'example.com', 'rebind.test', '', '1.2.3.4.5.6', '[not-an-ip]'])('%s is not an address', (input) => {
    expect(canonicalAddress(input)).toBeNull();
  });
});

describe('alwaysRefusedReason', () => {
  it.each(['0.0.0.0', '0.1.2.3', '169.254.169.254', '169.254.0.1', '168.63.129.16', '100.100.100.200', '224.0.0.1', '255.255.255.255', '0:0:0:0:0:0:0:0', 'fe80:0:0:0:0:0:0:1', 'fd00:ec2:0:0:0:0:0:254', 'ff02:0:0:0:0:0:0:1'])(
    'refuses %s',
    (address) => {
      expect(alwaysRefusedReason(address)).toEqual(expect.any(String));
    },
  );

  it.each(['127.0.0.1', '10.0.0.1', '192.168.1.20', '0:0:0:0:0:0:0:1', 'fd00:0:0:0:0:0:0:2'])('leaves %s to the allow list', (address) => {
    expect(alwaysRefusedReason(address)).toBeNull();
  });
});

describe('checkTargetHost', () => {
  const defaults = ['localhost', '127.0.0.1', '::1'];

  it('allows the default loopback entries in any spelling', () => {
    expect(checkTargetHost('localhost', defaults)).toBeNull();
    expect(checkTargetHost('LOCALHOST.', defaults)).toBeNull();
    expect(checkTargetHost('127.0.0.1', defaults)).toBe('127.0.0.1');
    expect(checkTargetHost('[::1]', defaults)).toBe('0:0:0:0:0:0:0:1');
    expect(checkTargetHost('[::ffff:7f00:1]', defaults)).toBe('127.0.0.1');
  });

  it('matches names as names and addresses as addresses', () => {
    expect(() => checkTargetHost('127.0.0.1', ['localhost'])).toThrow(/not in replay.allow_hosts/);
    expect(() => checkTargetHost('localhost', ['127.0.0.1'])).toThrow(/not in replay.allow_hosts/);
    expect(checkTargetHost('10.0.0.7', ['10.0.0.7'])).toBe('10.0.0.7');
    expect(checkTargetHost('dev.box.test', ['Dev.Box.Test'])).toBeNull();
    expect(() => checkTargetHost('sub.dev.box.test', ['dev.box.test'])).toThrow(TargetRefusedError);
  });

  it('refuses provider hosts and metadata whatever the allow list says', () => {
    for (const host of ['api.github.com', 'hooks.slack.com', 'api.stripe.com', 'files.stripe.com', 'gitlab.com']) {
      expect(() => checkTargetHost(host, [host])).toThrow(/webhook provider/);
    }
    expect(() => checkTargetHost('metadata.google.internal', ['metadata.google.internal'])).toThrow(/metadata/);
    expect(() => checkTargetHost('169.254.169.254', ['169.254.169.254'])).toThrow(/link-local/);
    expect(() => checkTargetHost('0.0.0.0', ['0.0.0.0'])).toThrow(/unspecified/);
    // Not a provider just because the name ends the same way.
    expect(checkTargetHost('notgithub.com', ['notgithub.com'])).toBeNull();
  });
});

describe('checkResolvedAddress', () => {
  it('accepts a name resolving to an ordinary address', () => {
    expect(() => checkResolvedAddress('dev.box.test', '192.168.1.20')).not.toThrow();
    expect(() => checkResolvedAddress('localhost', '::1')).not.toThrow();
    expect(() => checkResolvedAddress('localhost', '::ffff:127.0.0.1')).not.toThrow();
  });

  it('refuses metadata, any-addresses and non-loopback localhost', () => {
    expect(() => checkResolvedAddress('dev.box.test', '169.254.169.254')).toThrow(TargetRefusedError);
    expect(() => checkResolvedAddress('dev.box.test', '::ffff:169.254.169.254')).toThrow(TargetRefusedError);
    expect(() => checkResolvedAddress('dev.box.test', '0.0.0.0')).toThrow(TargetRefusedError);
    expect(() => checkResolvedAddress('localhost', '10.0.0.1')).toThrow(/not a loopback/);
    expect(() => checkResolvedAddress('dev.box.test', '')).toThrow(TargetRefusedError);
  });
});
