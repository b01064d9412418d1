// Where webhooks may go (issue 34, part 4). By default an endpoint whose address is loopback, link-local (the cloud
// metadata services 169.254.169.254 and fd00:ec2::254 among them), private, shared (CGNAT), unique-local or unspecified
// (IPv4-mapped IPv6 forms included) is refused: a URL with such a literal address at start, and a name that resolves
// only to such addresses when it is connected to. The check is in the connection's own `lookup`, so the address checked
// is the address connected to (no second resolution in between). `webhooks.allow_private: true` lifts it.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** The error code a refused address gives (the delivery's recorded result). */
export const PRIVATE_ADDRESS = 'private_address';

const V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, 169.254.169.254 metadata
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, 255.255.255.255 broadcast
];
const V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique-local, fd00:ec2::254 metadata
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
];

/** The refused ranges; IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are matched against the IPv4 ranges. */
export function privateRanges(): BlockList {
  const list = new BlockList();
  for (const [net, bits] of V4) list.addSubnet(net, bits, 'ipv4');
  for (const [net, bits] of V6) list.addSubnet(net, bits, 'ipv6');
  return list;
}

const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/** True for an address in a refused range; false for a public one or a name (not an address). */
export function isPrivateAddress(address: string, ranges: BlockList = privateRanges()): boolean {
  const a = bare(address);
  const family = isIP(a);
  if (family === 0) return false;
  return ranges.check(a, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's host when it is a literal address in a refused range (`localhost` counts as loopback), else undefined. */
export function privateLiteral(url: string, ranges: BlockList = privateRanges()): string | undefined {
  const host = bare(new URL(url).hostname).toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return host;
  return isPrivateAddress(host, ranges) ? host : undefined;
}

class PrivateAddressError extends Error {
  readonly code = PRIVATE_ADDRESS;
}

/**
 * A `lookup` for the connection (net.connect's option): resolves the name, keeps only the allowed addresses and
 * connects to one of those, so a name resolving to a private address is refused after DNS, at connect time.
 */
export function guardedLookup(ranges: BlockList = privateRanges(), resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, Object.assign({}, options, { all: true as const }), (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const allowed = addresses.filter((a) => !isPrivateAddress(a.address, ranges));
      if (allowed.length === 0) {
        const list = addresses.map((a) => a.address).join(', ');
        return callback(
          new PrivateAddressError(`${hostname} resolves to ${list}: a private, loopback or link-local address (webhooks.allow_private is false)`),
          '',
          0,
        );
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0].address, allowed[0].family);
    });
  };
}
