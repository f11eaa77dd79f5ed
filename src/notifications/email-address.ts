// Whether SendGrid would take an address as a recipient: its syntax, as RFC 5321 has it
// for the mailbox of an SMTP envelope (a dot-atom before the @, a host name after it),
// with RFC 6531's non-ASCII letters allowed. SendGrid refuses a request with any address
// it cannot parse, and the refusal is a 400 for the whole request, every recipient in it.
// The database lets more through (guests.email only needs text@text.text), so the worker
// checks each address before it batches, and fails those it would refuse on their own.
// What SendGrid still refuses that this lets through is found by splitting the batch
// (email-batch.ts).

// Every printable ASCII character an atom may hold (RFC 5322 atext), and any non-ASCII one.
const atom = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+$/u;
// A host name's label: letters, digits and inner hyphens, or non-ASCII letters (an
// internationalized name that SendGrid's relay would encode).
const label = /^(?!-)[A-Za-z0-9\u0080-\uFFFF-]+(?<!-)$/u;

const utf8 = new TextEncoder();

/** Why SendGrid would refuse the address, or null when it would take it. */
export function addressProblem(address: string): string | null {
  if (address.trim() !== address || /\s/.test(address)) return "it has white space in it";
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(address)) return "it has a control character in it";
  const at = address.lastIndexOf("@");
  if (at < 0) return "it has no @";
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (utf8.encode(address).length > 254) return "it is longer than 254 bytes";
  if (local === "") return "nothing comes before the @";
  if (local.startsWith('"')) return "the part before the @ is quoted, which SendGrid does not take";
  if (utf8.encode(local).length > 64) return "the part before the @ is longer than 64 bytes";
  if (local.includes("@")) return "it has more than one @";
  if (local.startsWith(".") || local.endsWith(".")) return "the part before the @ starts or ends with a dot";
  if (local.includes("..")) return "the part before the @ has two dots in a row";
  if (!local.split(".").every((part) => atom.test(part))) return "the part before the @ has a character an address cannot have";
  if (domain === "") return "nothing comes after the @";
  if (domain.startsWith("[")) return "the domain is an address literal, which SendGrid does not take";
  const labels = domain.split(".");
  if (labels.length < 2) return "the domain has no dot";
  if (labels.some((part) => part === "")) return "the domain has an empty label (a dot at an end, or two in a row)";
  if (labels.some((part) => part.length > 63)) return "a label of the domain is longer than 63 characters";
  if (!labels.every((part) => label.test(part))) {
    return "the domain has a character a host name cannot have, or a label starting or ending with a hyphen";
  }
  if (/^[0-9]+$/.test(labels.at(-1)!)) return "the domain's last label is a number";
  return null;
}

/** The reason a notification fails with when its address is one SendGrid would refuse. */
export function invalidAddressReason(address: string, problem: string): string {
  return `the email address ${JSON.stringify(address)} is not one SendGrid accepts (${problem}): nothing was sent`;
}
