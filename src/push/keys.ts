// The keys of Web Push as browsers and servers write them: base64url (RFC 4648 section 5),
// without padding. A browser's subscription carries its P-256 public key and its
// authentication secret (RFC 8291); a server's application key is a P-256 public key too
// (VAPID, RFC 8292).

// An uncompressed P-256 point (SEC 1: 0x04, then x and y, 32 bytes each) is 65 bytes, 87
// characters. Its first byte, 0x04, fixes the first character (B) and leaves the second
// A to P; the last character holds the last 4 bits and 2 zero bits. So the pattern admits
// exactly the canonical encodings of 65 bytes that start with 0x04 (padding optional).
export const P256_PUBLIC_KEY_PATTERN = "^B[A-P][A-Za-z0-9_-]{84}[AEIMQUYcgkosw048]=?$";
// An authentication secret is 16 bytes, 22 characters; the last holds 2 bits and 4 zero bits.
export const AUTH_SECRET_PATTERN = "^[A-Za-z0-9_-]{21}[AQgw](==)?$";

const p256PublicKey = new RegExp(P256_PUBLIC_KEY_PATTERN);

export function withoutPadding(base64url: string): string {
  return base64url.replace(/=+$/, "");
}

export function base64UrlBytes(base64url: string): Uint8Array {
  const base64 = withoutPadding(base64url).replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
}

// The curve's prime and its b (FIPS 186-4 D.1.2.3); a is -3.
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

function bigEndian(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

// Whether 65 bytes are a point on P-256: 65 random bytes that start with 0x04 almost never
// are, and a key that is not one cannot be encrypted to, so every push to it would fail.
export function isP256Point(bytes: Uint8Array): boolean {
  if (bytes.length !== 65 || bytes[0] !== 0x04) return false;
  const x = bigEndian(bytes.subarray(1, 33));
  const y = bigEndian(bytes.subarray(33));
  if (x >= P || y >= P) return false;
  const rightSide = ((x * x % P) * x - 3n * x + B) % P;
  return (y * y - rightSide) % P === 0n;
}

// A P-256 public key written as Web Push writes it, and on the curve.
export function isP256PublicKey(base64url: string): boolean {
  return p256PublicKey.test(base64url) && isP256Point(base64UrlBytes(base64url));
}
