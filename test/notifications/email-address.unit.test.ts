// The addresses the worker fails before any request, because SendGrid would refuse the
// request they are in; and the ones it lets through, odd as some look. Pure.
import assert from "node:assert/strict";
import { addressProblem, invalidAddressReason } from "../../src/notifications/email-address.ts";

Deno.test("addresses SendGrid takes pass, the unusual but valid ones too", () => {
  for (
    const address of [
      "ana@example.com",
      "Ana.Silva+stays@mail.example.co.uk",
      "o'neil@example.ie",
      "x@a.io",
      "first_last-1@sub-domain.example",
      "#!$%&'*+/=?^_`{|}~-@example.org",
      "jürgen@bücher.example",
      "ana@xn--bcher-kva.example",
    ]
  ) {
    assert.equal(addressProblem(address), null, address);
  }
});

Deno.test("an address the database lets through but SendGrid would refuse has a problem, said plainly", () => {
  const refused: [string, RegExp][] = [
    ["ana..silva@example.com", /two dots in a row/],
    [".ana@example.com", /starts or ends with a dot/],
    ["ana.@example.com", /starts or ends with a dot/],
    ["ana@example..com", /empty label/],
    ["ana@example.com.", /empty label/],
    ["ana@-example.com", /hyphen/],
    ["ana@exa_mple.com", /a character a host name cannot have/],
    ["ana(silva)@example.com", /a character an address cannot have/],
    ["ana,silva@example.com", /a character an address cannot have/],
    ["<ana>@example.com", /a character an address cannot have/],
    ["ana@b@example.com", /more than one @/],
    ['"ana silva"@example.com', /white space/],
    ['"ana"@example.com', /quoted/],
    ["ana@[192.0.2.1]", /address literal/],
    ["ana@example.123", /last label is a number/],
    ["ana@localhost", /no dot/],
    ["ana", /no @/],
    ["@example.com", /nothing comes before/],
    ["ana@", /nothing comes after/],
    [" ana@example.com", /white space/],
    ["ana@exam\u0007ple.com", /control character/],
    [`${"a".repeat(65)}@example.com`, /longer than 64 bytes/],
    [`ana@${"a".repeat(64)}.com`, /longer than 63 characters/],
    [`ana@${"abcdefghi.".repeat(25)}com`, /longer than 254 bytes/],
  ];
  for (const [address, problem] of refused) {
    assert.match(addressProblem(address) ?? "(none)", problem, address);
  }
});

Deno.test("the reason names the address and that nothing was sent", () => {
  assert.equal(
    invalidAddressReason("ana..silva@example.com", "the part before the @ has two dots in a row"),
    'the email address "ana..silva@example.com" is not one SendGrid accepts (the part before the @ has two dots in a row): nothing was sent',
  );
});
