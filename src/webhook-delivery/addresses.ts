// What an IP address is, as far as posting a webhook to it goes: on the public internet,
// or somewhere a request from our servers must never be sent on a tenant's word (this
// machine, the provider's private network, the cloud's metadata service at 169.254.169.254,
// a multicast group, a range set aside for documentation). The ranges are IANA's
// special-purpose registries for IPv4 and IPv6; an IPv6 address that carries an IPv4 one
// (IPv4-mapped, NAT64) is what that IPv4 address is.

export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  // 100.64.0.0/10, the carrier-grade NAT space between a provider and its customers.
  | "shared"
  | "link-local"
  | "unique-local"
  | "multicast"
  // 0.0.0.0/8 and ::, which Linux connects to this machine.
  | "unspecified"
  // Documentation, benchmarking, protocol assignments, the future-use block, deprecated
  // transition ranges: nothing a receiver is reachable at.
  | "reserved";

// How a kind reads in a sentence: "10.0.0.5 is a private address".
export const ADDRESS_KIND_NAMES: Record<AddressKind, string> = {
  public: "a public address",
  loopback: "a loopback address (this machine)",
  private: "a private address",
  shared: "a carrier-grade NAT address (100.64.0.0/10)",
  "link-local": "a link-local address",
  "unique-local": "a unique local IPv6 address",
  multicast: "a multicast address",
  unspecified: "an unspecified address",
  reserved: "a reserved address",
};

const IPV4_PART = /^(0|[1-9][0-9]{0,2})$/;
const IPV6_WORD = /^[0-9a-f]{1,4}$/i;

// The four bytes of a dotted-quad IPv4 address, or null. Only the canonical form: a URL's
// host is written so by the URL parser, and resolvers answer so.
function ipv4Bytes(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => IPV4_PART.test(part) && Number(part) <= 255)) return null;
  return parts.map(Number);
}

// The sixteen bytes of an IPv6 address (`::` shorthand and a dotted IPv4 tail allowed; no
// zone), or null.
function ipv6Bytes(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const words = (part: string, endsAddress: boolean): number[] | null => {
    if (part === "") return [];
    const groups = part.split(":");
    const parsed: number[] = [];
    for (const [index, group] of groups.entries()) {
      if (endsAddress && index === groups.length - 1 && group.includes(".")) {
        const ipv4 = ipv4Bytes(group);
        if (!ipv4) return null;
        parsed.push(ipv4[0]! << 8 | ipv4[1]!, ipv4[2]! << 8 | ipv4[3]!);
      } else if (IPV6_WORD.test(group)) {
        parsed.push(parseInt(group, 16));
      } else {
        return null;
      }
    }
    return parsed;
  };
  const head = words(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? words(halves[1]!, true) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  // `::` stands for at least one group of zeros; without it there are exactly eight.
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail].flatMap((word) => [word >> 8, word & 0xff]);
}

// An address as bytes: 4 for IPv4, 16 for IPv6. Brackets (a URL's IPv6 host) are taken off.
export function addressBytes(address: string): number[] | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  return bare.includes(":") ? ipv6Bytes(bare) : ipv4Bytes(bare);
}

type Range = { bytes: number[]; bits: number; kind: AddressKind };

function range(cidr: string, kind: AddressKind): Range {
  const [address, bits] = cidr.split("/");
  const bytes = addressBytes(address!);
  if (!bytes) throw new Error(`not an address range: ${cidr}`);
  return { bytes, bits: Number(bits), kind };
}

function within(bytes: number[], { bytes: prefix, bits }: Range): boolean {
  if (bytes.length !== prefix.length) return false;
  for (let bit = 0; bit < bits; bit += 8) {
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if ((bytes[bit / 8]! & mask) !== (prefix[bit / 8]! & mask)) return false;
  }
  return true;
}

// Every IPv4 range that is not the public internet; the rest is.
const IPV4_RANGES: Range[] = [
  range("0.0.0.0/8", "unspecified"),
  range("10.0.0.0/8", "private"),
  range("100.64.0.0/10", "shared"),
  range("127.0.0.0/8", "loopback"),
  range("169.254.0.0/16", "link-local"),
  range("172.16.0.0/12", "private"),
  range("192.0.0.0/24", "reserved"),
  range("192.0.2.0/24", "reserved"),
  range("192.88.99.0/24", "reserved"),
  range("192.168.0.0/16", "private"),
  range("198.18.0.0/15", "reserved"),
  range("198.51.100.0/24", "reserved"),
  range("203.0.113.0/24", "reserved"),
  range("224.0.0.0/4", "multicast"),
  // With 255.255.255.255, the broadcast address.
  range("240.0.0.0/4", "reserved"),
];

// IPv6 is the other way round: only global unicast (2000::/3) is public, less the parts of
// it set aside; everything outside it that is not named here is reserved.
const IPV6_RANGES: Range[] = [
  range("::/128", "unspecified"),
  range("::1/128", "loopback"),
  range("fc00::/7", "unique-local"),
  range("fe80::/10", "link-local"),
  range("ff00::/8", "multicast"),
  // Protocol assignments with Teredo, documentation (two blocks), 6to4.
  range("2001::/23", "reserved"),
  range("2001:db8::/32", "reserved"),
  range("3fff::/20", "reserved"),
  range("2002::/16", "reserved"),
];
const GLOBAL_UNICAST = range("2000::/3", "public");
// IPv6 addresses whose last four bytes are an IPv4 address that is what is reached.
const CARRYING_IPV4 = [range("::ffff:0:0/96", "reserved"), range("64:ff9b::/96", "reserved")];

function kindOfBytes(bytes: number[]): AddressKind {
  if (bytes.length === 4) return IPV4_RANGES.find((candidate) => within(bytes, candidate))?.kind ?? "public";
  if (CARRYING_IPV4.some((candidate) => within(bytes, candidate))) return kindOfBytes(bytes.slice(12));
  const named = IPV6_RANGES.find((candidate) => within(bytes, candidate));
  if (named) return named.kind;
  return within(bytes, GLOBAL_UNICAST) ? "public" : "reserved";
}

// What `address` (IPv4 or IPv6, a URL's bracketed IPv6 host too) is; null when it is not
// an IP address at all.
export function addressKind(address: string): AddressKind | null {
  const bytes = addressBytes(address);
  return bytes ? kindOfBytes(bytes) : null;
}
