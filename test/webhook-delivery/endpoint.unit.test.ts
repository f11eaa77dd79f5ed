// Where a webhook may go, without the network: what each address is, which URLs a
// subscription may be saved with, the setting that lets loopback in, and the posts refused
// before any connection because the name resolves somewhere private. endpoint.test.ts posts
// to loopback servers.
import assert from "node:assert/strict";
import { addressKind } from "../../src/webhook-delivery/addresses.ts";
import {
  checkEndpointUrl,
  postWebhook,
  type ResolveHost,
  resolverForOneRun,
  WEBHOOK_URL_MAX_LENGTH,
  type WebhookEndpointPolicy,
  webhookEndpointPolicyFromEnv,
} from "../../src/webhook-delivery/endpoint.ts";

const STRICT: WebhookEndpointPolicy = { allowLoopbackHttp: false };
const LOCAL: WebhookEndpointPolicy = { allowLoopbackHttp: true };

Deno.test("addresses: each special-purpose range is named, and what is left is public", () => {
  const cases: [string, ReturnType<typeof addressKind>][] = [
    ["93.184.215.14", "public"], ["8.8.8.8", "public"], ["1.1.1.1", "public"], ["172.32.0.1", "public"], ["100.128.0.1", "public"],
    ["0.0.0.0", "unspecified"], ["0.1.2.3", "unspecified"],
    ["10.0.0.5", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.1", "private"],
    ["100.64.0.1", "shared"], ["100.127.255.255", "shared"],
    ["127.0.0.1", "loopback"], ["127.255.0.9", "loopback"],
    ["169.254.169.254", "link-local"],
    ["192.0.0.8", "reserved"], ["192.0.2.10", "reserved"], ["198.18.0.1", "reserved"], ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"], ["192.88.99.1", "reserved"], ["240.0.0.1", "reserved"], ["255.255.255.255", "reserved"],
    ["224.0.0.1", "multicast"], ["239.255.255.250", "multicast"],
    ["2606:4700:4700::1111", "public"], ["2a00:1450:4001:80b::200e", "public"], ["[2606:4700::1]", "public"],
    ["::", "unspecified"], ["::1", "loopback"], ["[::1]", "loopback"], ["0:0:0:0:0:0:0:1", "loopback"],
    ["fd00::1", "unique-local"], ["fc12:3456::1", "unique-local"], ["fe80::1", "link-local"], ["febf::1", "link-local"],
    ["ff02::1", "multicast"], ["2001:db8::1", "reserved"], ["2001::1", "reserved"], ["2002:c000:204::1", "reserved"],
    ["3fff::1", "reserved"], ["100::1", "reserved"], ["::a00:5", "reserved"], ["fec0::1", "reserved"], ["5f00::1", "reserved"],
    // An IPv6 address that carries an IPv4 one is what the IPv4 one is.
    ["::ffff:10.0.0.5", "private"], ["::ffff:127.0.0.1", "loopback"], ["::ffff:a9fe:a9fe", "link-local"],
    ["::ffff:8.8.8.8", "public"], ["64:ff9b::169.254.169.254", "link-local"], ["64:ff9b::808:808", "public"],
  ];
  for (const [address, kind] of cases) assert.equal(addressKind(address), kind, address);
  for (const notAnAddress of ["hooks.example.com", "256.1.1.1", "1.2.3", "01.2.3.4", "1:2:3:4:5:6:7:8:9", "1::2::3", "::g", "fe80::1%eth0", ""]) {
    assert.equal(addressKind(notAnAddress), null, notAnAddress);
  }
});

Deno.test("endpoint URLs: https to a public name or address is taken", () => {
  for (const url of [
    "https://hooks.example.com/pms",
    "https://hooks.example.com:8443/pms?tenant=abc#frag",
    "https://93.184.215.14/in",
    "https://[2606:4700::1111]/in",
    "https://xn--bcher-kva.example/",
  ]) {
    const checked = checkEndpointUrl(url, STRICT);
    assert.ok(checked.ok, `${url}: ${JSON.stringify(checked)}`);
    assert.equal(checked.url.href, new URL(url).href);
  }
});

Deno.test("endpoint URLs: each refusal has its reason code and a sentence", () => {
  const refused = (url: string, policy = STRICT) => {
    const checked = checkEndpointUrl(url, policy);
    assert.ok(!checked.ok, `${url} was taken`);
    assert.ok(checked.message.length > 0);
    return checked.reason;
  };
  assert.equal(refused("not a url"), "invalid-url");
  assert.equal(refused(`https://hooks.example.com/${"a".repeat(WEBHOOK_URL_MAX_LENGTH)}`), "invalid-url");
  assert.equal(refused("http://hooks.example.com/"), "scheme-not-allowed");
  assert.equal(refused("ftp://hooks.example.com/"), "scheme-not-allowed");
  assert.equal(refused("javascript:alert(1)"), "scheme-not-allowed");
  assert.equal(refused("https://user:pass@hooks.example.com/"), "credentials-in-url");
  assert.equal(refused("https://token@hooks.example.com/"), "credentials-in-url");
  for (const host of ["localhost", "LOCALHOST.", "api.localhost", "printer.local", "metadata.google.internal", "nas.home.arpa", "intranet"]) {
    assert.equal(refused(`https://${host}/hook`), "host-not-allowed", host);
  }
  for (const host of [
    "127.0.0.1", "10.0.0.5", "169.254.169.254", "100.64.1.1", "0.0.0.0", "224.0.0.1", "192.0.2.1",
    "[::1]", "[::]", "[fd00::1]", "[fe80::1]", "[ff02::1]", "[::ffff:10.0.0.5]", "[::ffff:169.254.169.254]",
    // Other ways of writing an address, which the URL parser writes as dotted quads.
    "2130706433", "0x7f.0.0.1", "0177.0.0.1", "10.1", "0x0A000005",
  ]) {
    assert.equal(refused(`https://${host}/hook`), "address-not-allowed", host);
  }
});

Deno.test("endpoint URLs: loopback, by http too, only when the policy allows it", () => {
  for (const url of ["http://127.0.0.1:54328/hooks/a", "http://localhost:54328/", "https://127.0.0.1/", "http://[::1]:8080/", "http://127.9.9.9/"]) {
    assert.ok(checkEndpointUrl(url, LOCAL).ok, url);
    assert.ok(!checkEndpointUrl(url, STRICT).ok, url);
  }
  // The policy opens loopback, nothing else: plain http to any other host, private addresses
  // and credentials are still refused.
  assert.deepEqual(reasonOf("http://hooks.example.com/", LOCAL), "scheme-not-allowed");
  assert.deepEqual(reasonOf("https://10.0.0.5/", LOCAL), "address-not-allowed");
  assert.deepEqual(reasonOf("http://10.0.0.5/", LOCAL), "address-not-allowed");
  assert.deepEqual(reasonOf("http://user:pw@127.0.0.1/", LOCAL), "credentials-in-url");
});

function reasonOf(url: string, policy: WebhookEndpointPolicy) {
  const checked = checkEndpointUrl(url, policy);
  return checked.ok ? "ok" : checked.reason;
}

Deno.test("endpoint policy: WEBHOOKS_ALLOW_LOOPBACK_HTTP true allows loopback; unset or false does not; anything else stops", () => {
  const from = (value: string | undefined) => webhookEndpointPolicyFromEnv((name) => name === "WEBHOOKS_ALLOW_LOOPBACK_HTTP" ? value : undefined);
  assert.deepEqual(from("true"), { allowLoopbackHttp: true });
  assert.deepEqual(from("false"), { allowLoopbackHttp: false });
  assert.deepEqual(from(undefined), { allowLoopbackHttp: false });
  assert.deepEqual(from(""), { allowLoopbackHttp: false });
  for (const value of ["TRUE", "1", "yes"]) assert.throws(() => from(value), /WEBHOOKS_ALLOW_LOOPBACK_HTTP/);
});

// A resolver that answers `addresses` and counts the names it was asked for.
function fakeResolver(addresses: string[]): ResolveHost & { asked: string[] } {
  const asked: string[] = [];
  return Object.assign((name: string) => {
    asked.push(name);
    return Promise.resolve(addresses);
  }, { asked });
}

const post = { headers: { "webhook-id": "m1" }, body: "{}", timeoutMs: 2000 };

Deno.test("posting: a name that resolves to any private, link-local, loopback or unique-local address is refused before connecting", async () => {
  for (const answer of [["10.0.0.5"], ["169.254.169.254"], ["::1"], ["fd00::1"], ["93.184.215.14", "10.0.0.5"], ["2606:4700::1", "fe80::1"], ["::ffff:127.0.0.1"]]) {
    const resolve = fakeResolver(answer);
    // No permission to reach the network is granted to unit tests: a connection would throw.
    const result = await postWebhook({ ...post, url: "https://hooks.example.com/in", policy: STRICT, resolve });
    assert.equal(result.outcome, "refused", JSON.stringify(answer));
    assert.ok(result.outcome === "refused" && result.reason === "address-not-allowed");
    assert.match(result.message, /^hooks\.example\.com resolves to /);
    assert.deepEqual(resolve.asked, ["hooks.example.com"]);
  }
});

Deno.test("posting: a URL refused as it would be at creation is refused without resolving", async () => {
  const resolve = fakeResolver(["93.184.215.14"]);
  for (const [url, reason] of [
    ["http://hooks.example.com/", "scheme-not-allowed"],
    ["https://169.254.169.254/latest/meta-data/", "address-not-allowed"],
    ["http://127.0.0.1:9/", "address-not-allowed"],
    ["https://localhost/", "host-not-allowed"],
  ] as const) {
    const result = await postWebhook({ ...post, url, policy: STRICT, resolve });
    assert.deepEqual({ outcome: result.outcome, reason: result.outcome === "refused" ? result.reason : null }, { outcome: "refused", reason }, url);
  }
  assert.deepEqual(resolve.asked, []);
});

Deno.test("posting: a resolver that fails, finds nothing or answers nonsense is a DNS failure", async () => {
  const failing: ResolveHost = () => Promise.reject(new Error("NXDOMAIN"));
  for (const resolve of [failing, fakeResolver([]), fakeResolver(["not-an-address"])]) {
    const result = await postWebhook({ ...post, url: "https://hooks.example.com/in", policy: STRICT, resolve });
    assert.equal(result.outcome, "network-error");
    assert.ok(result.outcome === "network-error" && result.reason === "dns-failure", JSON.stringify(result));
  }
});

Deno.test("posting: a resolver slower than the timeout is a timeout, and the duration is the clock's", async () => {
  let clock = 1000;
  const stalled: ResolveHost = (_name, signal) =>
    new Promise((_resolve, reject) => signal.addEventListener("abort", () => {
      clock += 50;
      reject(new Error("aborted"));
    }));
  const result = await postWebhook({ ...post, timeoutMs: 20, url: "https://hooks.example.com/in", policy: STRICT, resolve: stalled, now: () => clock });
  assert.deepEqual(result, { outcome: "network-error", reason: "timeout", message: "https://hooks.example.com did not answer within 20 ms", durationMs: 50 });
});

Deno.test("posting: a resolver that never answers, deaf to the signal, holds the post no longer than the timeout", async () => {
  const deaf: ResolveHost = () => new Promise(() => {});
  const result = await postWebhook({ ...post, timeoutMs: 20, url: "https://hooks.example.com/in", policy: STRICT, resolve: deaf });
  assert.ok(result.outcome === "network-error" && result.reason === "timeout", JSON.stringify(result));
});

Deno.test("posting: options out of range are the caller's mistake", async () => {
  const base = { ...post, url: "https://hooks.example.com/in", policy: STRICT, resolve: fakeResolver(["10.0.0.1"]) };
  await assert.rejects(postWebhook({ ...base, timeoutMs: 0 }), RangeError);
  await assert.rejects(postWebhook({ ...base, maxResponseBytes: 1.5 }), RangeError);
  await assert.rejects(postWebhook({ ...base, maxResponseBytes: 2048, maxReadBytes: 1024 }), RangeError);
});

Deno.test("a run's resolver asks once per name, and its failure stands for the run too", async () => {
  const asked: string[] = [];
  const resolve = resolverForOneRun((name) => {
    asked.push(name);
    return name === "gone.example.com" ? Promise.reject(new Error("no records")) : Promise.resolve(["10.0.0.5"]);
  });
  const post = (url: string) => postWebhook({ url, headers: {}, body: "{}", policy: { allowLoopbackHttp: false }, resolve });
  for (const url of ["https://a.example.com/1", "https://a.example.com/2", "https://gone.example.com/1", "https://gone.example.com/2"]) {
    const result = await post(url);
    assert.ok(result.outcome === "refused" || (result.outcome === "network-error" && result.reason === "dns-failure"), JSON.stringify(result));
  }
  assert.deepEqual(asked, ["a.example.com", "gone.example.com"]);
});
