// Posting a webhook to servers of the test's own on loopback (no stack needed): what the
// endpoint receives, how much of its answer is kept and read, the redirect that is not
// followed, the timeout, and that the connection goes to the address the resolver gave and
// checked while the URL's name stays the Host and, over TLS, the name the certificate is
// verified for. endpoint.unit.test.ts covers what is refused without connecting.
import assert from "node:assert/strict";
import {
  connectionsForOneRun,
  postWebhook,
  type ResolveHost,
  WEBHOOK_USER_AGENT,
  type WebhookPost,
} from "../../src/webhook-delivery/endpoint.ts";

const LOCAL = { allowLoopbackHttp: true };
const STRICT = { allowLoopbackHttp: false };

type Received = { method: string; url: string; headers: Headers; body: string };

// A server on 127.0.0.1 that records what it receives and answers with `answer`.
function loopbackServer(answer: (request: Request) => Response | Promise<Response>, tls?: { cert: string; key: string }) {
  const received: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {}, ...tls }, async (request) => {
    received.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
    return await answer(request);
  });
  return { port: server.addr.port, received, [Symbol.asyncDispose]: () => server.shutdown() };
}

// A resolver that gives every name this machine, and counts the names asked for.
function toLoopback(): ResolveHost & { asked: string[] } {
  const asked: string[] = [];
  return Object.assign((name: string) => {
    asked.push(name);
    return Promise.resolve(["127.0.0.1"]);
  }, { asked });
}

const SIGNED = { "webhook-id": "msg_1", "webhook-timestamp": "1700000000", "webhook-signature": "v1,c2lnbmF0dXJl" };
const BODY = JSON.stringify({ type: "reservation.created", data: { reservation: { guestName: "Zoë 🏨" } } });

function sent(url: string, change: Partial<WebhookPost> = {}): Promise<Awaited<ReturnType<typeof postWebhook>>> {
  return postWebhook({ url, headers: SIGNED, body: BODY, policy: LOCAL, timeoutMs: 5000, ...change });
}

function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, milliseconds);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

Deno.test("posting: the endpoint gets a POST with the exact body, the signature's headers, JSON and our user agent; a 2xx is a response", async () => {
  await using server = loopbackServer(() => new Response("thanks", { status: 202 }));
  const result = await sent(`http://127.0.0.1:${server.port}/hooks/a?tenant=t1`);
  assert.equal(result.outcome, "response", JSON.stringify(result));
  assert.ok(result.outcome === "response");
  assert.deepEqual({ status: result.status, snippet: result.snippet, retryAfter: result.retryAfter }, { status: 202, snippet: "thanks", retryAfter: null });
  assert.ok(Number.isInteger(result.durationMs) && result.durationMs >= 0);

  const [request, ...more] = server.received;
  assert.deepEqual(more, []);
  assert.equal(request!.method, "POST");
  assert.equal(new URL(request!.url).pathname + new URL(request!.url).search, "/hooks/a?tenant=t1");
  assert.equal(request!.body, BODY);
  assert.equal(request!.headers.get("content-type"), "application/json");
  assert.equal(request!.headers.get("user-agent"), WEBHOOK_USER_AGENT);
  assert.equal(request!.headers.get("content-length"), String(new TextEncoder().encode(BODY).length));
  for (const [name, value] of Object.entries(SIGNED)) assert.equal(request!.headers.get(name), value);
});

Deno.test("posting: the snippet is the first KiB of the body, a character cut at the end left out", async () => {
  const bodies = ["x".repeat(5000), "é".repeat(1000), `a${"€".repeat(400)}`, "nul\0inside"];
  let next = 0;
  await using server = loopbackServer(() => new Response(bodies[next++], { status: 500 }));
  const url = `http://127.0.0.1:${server.port}/`;
  const snippets = [];
  for (const _ of bodies) {
    const result = await sent(url);
    assert.ok(result.outcome === "response" && result.status === 500, JSON.stringify(result));
    snippets.push(result.snippet);
  }
  // 1024 bytes: 1024 ASCII letters, 512 two-byte letters, one letter and 341 three-byte signs.
  assert.deepEqual(snippets, ["x".repeat(1024), "é".repeat(512), `a${"€".repeat(341)}`, "nul\uFFFDinside"]);
  bodies.push("0123456789abcdef");
  const shorter = await sent(url, { maxResponseBytes: 10 });
  assert.ok(shorter.outcome === "response" && shorter.snippet === "0123456789", JSON.stringify(shorter));
});

Deno.test("posting: a redirect is a response like any other, its Location never followed", async () => {
  await using target = loopbackServer(() => new Response("followed"));
  await using server = loopbackServer(() =>
    new Response("moved", { status: 307, headers: { location: `http://127.0.0.1:${target.port}/elsewhere` } })
  );
  const result = await sent(`http://127.0.0.1:${server.port}/`);
  assert.ok(result.outcome === "response", JSON.stringify(result));
  assert.deepEqual({ status: result.status, snippet: result.snippet }, { status: 307, snippet: "moved" });
  assert.equal(target.received.length, 0);
});

Deno.test("posting: Retry-After is handed back with the status", async () => {
  await using server = loopbackServer(() => new Response("slow down", { status: 429, headers: { "retry-after": "120" } }));
  const result = await sent(`http://127.0.0.1:${server.port}/`);
  assert.ok(result.outcome === "response", JSON.stringify(result));
  assert.deepEqual({ status: result.status, retryAfter: result.retryAfter }, { status: 429, retryAfter: "120" });
});

Deno.test("posting: an endpoint that answers later than the timeout is a timeout", async () => {
  const stop = new AbortController();
  await using server = loopbackServer(async () => {
    await sleep(3000, stop.signal);
    return new Response("too late");
  });
  const started = performance.now();
  const result = await sent(`http://127.0.0.1:${server.port}/`, { timeoutMs: 300 });
  const took = performance.now() - started;
  stop.abort();
  assert.equal(result.outcome, "network-error");
  assert.ok(result.outcome === "network-error" && result.reason === "timeout", JSON.stringify(result));
  assert.equal(result.message, `http://127.0.0.1:${server.port} did not answer within 300 ms`);
  assert.ok(took >= 290 && took < 2000, `took ${took} ms`);
  assert.ok(result.durationMs >= 290 && result.durationMs < 2000, `durationMs ${result.durationMs}`);
});

Deno.test("posting: a body without end is read up to the limit, then the connection is closed", async () => {
  let cancelled = false;
  let sentBytes = 0;
  const chunk = new TextEncoder().encode("y".repeat(16_384));
  await using server = loopbackServer(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          sentBytes += chunk.length;
          controller.enqueue(chunk);
        },
        cancel() {
          cancelled = true;
        },
      }),
      { status: 200 },
    )
  );
  const result = await sent(`http://127.0.0.1:${server.port}/`, { maxReadBytes: 65_536, timeoutMs: 10_000 });
  assert.ok(result.outcome === "response" && result.status === 200, JSON.stringify(result).slice(0, 300));
  assert.equal(result.snippet, "y".repeat(1024));
  assert.ok(result.durationMs < 5000, `durationMs ${result.durationMs}`);
  // The server notices the closed connection when it writes next.
  for (let waited = 0; !cancelled && waited < 5000; waited += 20) await sleep(20);
  assert.ok(cancelled, "the server's stream was never cancelled");
  assert.ok(sentBytes < 8 * 1024 * 1024, `the server got to send ${sentBytes} bytes`);
});

Deno.test("posting: a body that stalls after the status line is still that response, cut at the timeout", async () => {
  const stop = new AbortController();
  await using server = loopbackServer(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode("partial"));
          await sleep(3000, stop.signal);
          controller.close();
        },
      }),
      { status: 201 },
    )
  );
  const result = await sent(`http://127.0.0.1:${server.port}/`, { timeoutMs: 300 });
  stop.abort();
  assert.ok(result.outcome === "response", JSON.stringify(result));
  assert.deepEqual({ status: result.status, snippet: result.snippet }, { status: 201, snippet: "partial" });
});

Deno.test("posting: loopback only with the policy; without it nothing reaches the server", async () => {
  await using server = loopbackServer(() => new Response(null, { status: 204 }));
  for (const url of [`http://127.0.0.1:${server.port}/`, `http://localhost:${server.port}/`, `https://hooks.example.test:${server.port}/`]) {
    const refused = await sent(url, { policy: STRICT, resolve: toLoopback() });
    assert.equal(refused.outcome, "refused", url);
  }
  assert.equal(server.received.length, 0);
  const allowed = await sent(`http://localhost:${server.port}/`, { policy: LOCAL, resolve: toLoopback() });
  assert.ok(allowed.outcome === "response" && allowed.status === 204, JSON.stringify(allowed));
  assert.equal(server.received[0]!.headers.get("host"), `localhost:${server.port}`);
});

Deno.test("posting: a refused connection and an answer that is not HTTP are network errors", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedPort = listener.addr.port;
  listener.close();
  const refused = await sent(`http://127.0.0.1:${closedPort}/`);
  assert.ok(refused.outcome === "network-error" && refused.reason === "connection-refused", JSON.stringify(refused));

  const garbage = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const answering = (async () => {
    const connection = await garbage.accept();
    await connection.read(new Uint8Array(4096));
    await connection.write(new TextEncoder().encode("SSH-2.0-OpenSSH_9.6\r\n\r\n"));
    connection.close();
  })();
  const notHttp = await sent(`http://127.0.0.1:${garbage.addr.port}/`);
  await answering;
  garbage.close();
  assert.ok(notHttp.outcome === "network-error" && notHttp.reason === "protocol-error", JSON.stringify(notHttp));
});

// ---------------------------------------------------------------- TLS

// A certificate authority of this run's and a server certificate it issued for `name`
// alone, made with openssl: `ca` is what a client trusts, `cert` and `key` what the
// server serves. The server's certificate is an end entity's (CA:FALSE), as a real
// endpoint's is: TLS libraries refuse a CA certificate served as a server's own.
async function issuedCertificate(name: string): Promise<{ ca: string; cert: string; key: string }> {
  const folder = await Deno.makeTempDir();
  const openssl = async (args: string[]) => {
    const output = await new Deno.Command("openssl", { args, cwd: folder, stdout: "null", stderr: "piped" }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  };
  try {
    await openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
      "-subj", "/CN=webhook test CA", "-keyout", "ca.key", "-out", "ca.pem"]);
    await openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", `/CN=${name}`,
      "-keyout", "key.pem", "-out", "server.csr"]);
    await Deno.writeTextFile(`${folder}/server.ext`,
      `basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:${name}\nextendedKeyUsage=serverAuth\n`);
    await openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1",
      "-extfile", "server.ext", "-out", "cert.pem"]);
    const read = (file: string) => Deno.readTextFile(`${folder}/${file}`);
    return { ca: await read("ca.pem"), cert: await read("cert.pem"), key: await read("key.pem") };
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

Deno.test("posting over https: the connection goes to the checked address, the certificate is verified for the URL's name", async () => {
  const { ca, ...tls } = await issuedCertificate("hooks.example.test");
  await using server = loopbackServer(() => new Response("over tls"), tls);
  const resolve = toLoopback();
  // hooks.example.test resolves nowhere but through the resolver given: the answer can only
  // have come over a connection to the address it gave.
  const result = await sent(`https://hooks.example.test:${server.port}/in`, { resolve, trustedCertificates: [ca] });
  assert.ok(result.outcome === "response", JSON.stringify(result));
  assert.deepEqual({ status: result.status, snippet: result.snippet }, { status: 200, snippet: "over tls" });
  assert.deepEqual(resolve.asked, ["hooks.example.test"]);
  assert.equal(server.received[0]!.headers.get("host"), `hooks.example.test:${server.port}`);
  assert.equal(server.received[0]!.body, BODY);

  // The same server under another name: its certificate does not name it.
  const otherName = await sent(`https://other.example.test:${server.port}/in`, { resolve, trustedCertificates: [ca] });
  assert.ok(otherName.outcome === "network-error" && otherName.reason === "tls-failure", JSON.stringify(otherName));
  // Its issuer is not among those trusted. (Trusting the runtime's own roots, the
  // default, would need --allow-sys, which the stack's functions have and the tests do not.)
  const another = await issuedCertificate("hooks.example.test");
  const untrusted = await sent(`https://hooks.example.test:${server.port}/in`, { resolve, trustedCertificates: [another.ca] });
  assert.ok(untrusted.outcome === "network-error" && untrusted.reason === "tls-failure", JSON.stringify(untrusted));
  assert.equal(server.received.length, 1);
});

// ---------------------------------------------------------------- the run's connections

// An HTTP/1.1 server of raw sockets: it counts the connections it accepts and the requests
// each carries, and answers each request with `answer(n)` (n: the request's number on its
// connection, from 1); after an answer it closes the connection when `closeAfter` says so.
function rawServer(answer: (n: number) => string, closeAfter: (n: number) => boolean = () => false) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const connections: { requests: number; closedByPeer: boolean }[] = [];
  (async () => {
    for await (const connection of listener) {
      const seen = { requests: 0, closedByPeer: false };
      connections.push(seen);
      (async () => {
        const buffer = new Uint8Array(65_536);
        let text = "";
        try {
          for (;;) {
            const count = await connection.read(buffer);
            if (count === null) {
              seen.closedByPeer = true;
              break;
            }
            text += new TextDecoder("latin1").decode(buffer.subarray(0, count));
            // One request: its head, then the body its content-length gives (a byte a character).
            for (;;) {
              const end = text.indexOf("\r\n\r\n");
              if (end < 0) break;
              const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
              if (text.length < end + 4 + length) break;
              text = text.slice(end + 4 + length);
              seen.requests++;
              await connection.write(new TextEncoder().encode(answer(seen.requests)));
              if (closeAfter(seen.requests)) {
                connection.close();
                return;
              }
            }
          }
        } catch {
          // the client went
        }
        try {
          connection.close();
        } catch {
          // already closed
        }
      })();
    }
  })().catch(() => {});
  return { port: (listener.addr as Deno.NetAddr).port, connections, [Symbol.dispose]: () => listener.close() };
}

const noContent = () => "HTTP/1.1 204 No Content\r\ndate: Tue, 01 Dec 2026 00:00:00 GMT\r\n\r\n";
const ok = () => "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

Deno.test("the run's connections: posts to one endpoint share a kept connection; another name gets its own; closeAll closes them", async () => {
  using server = rawServer((n) => n % 2 === 0 ? noContent() : ok());
  const connections = connectionsForOneRun();
  for (let i = 0; i < 4; i++) {
    const result = await sent(`http://127.0.0.1:${server.port}/in`, { connections, timeoutMs: 2000 });
    assert.ok(result.outcome === "response" && [200, 204].includes(result.status), JSON.stringify(result));
    // A 204 has no body, whatever the connection does after it: the answer does not wait for more.
    assert.ok(result.durationMs < 1000, `answered at once: ${result.durationMs} ms`);
  }
  assert.deepEqual(server.connections.map((c) => c.requests), [4], "four posts over one connection");
  const other = await sent(`http://localhost:${server.port}/in`, { connections, timeoutMs: 2000 });
  assert.equal(other.outcome, "response");
  assert.deepEqual(server.connections.map((c) => c.requests), [4, 1], "another name, another connection");
  connections.closeAll();
  await sleep(100);
  assert.deepEqual(server.connections.map((c) => c.closedByPeer), [true, true], "both closed when the run ends");

  // Without the run's connections each post asks to close its own.
  await using single = loopbackServer(() => new Response(null, { status: 204 }));
  await sent(`http://127.0.0.1:${single.port}/in`);
  assert.equal(single.received[0]!.headers.get("connection"), "close");
});

Deno.test("the run's connections: one the server closed while it was kept is replaced, and the post reaches the server once", async () => {
  // The server closes every connection after its first answer, without saying so.
  using server = rawServer(ok, () => true);
  const connections = connectionsForOneRun();
  for (let i = 0; i < 3; i++) {
    const result = await sent(`http://127.0.0.1:${server.port}/in`, { connections, timeoutMs: 2000 });
    assert.ok(result.outcome === "response" && result.status === 200, JSON.stringify(result));
    await sleep(50);
  }
  assert.deepEqual(server.connections.map((c) => c.requests), [1, 1, 1], "each post taken once, on a connection of its own");
  connections.closeAll();
});

Deno.test("the run's connections: an answer that asks to close, or whose end only the close tells, is not kept", async () => {
  const answers = [
    "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok",
    "HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok",
  ];
  for (const answer of answers) {
    using server = rawServer(() => answer);
    const connections = connectionsForOneRun();
    for (let i = 0; i < 2; i++) {
      const result = await sent(`http://127.0.0.1:${server.port}/in`, { connections, timeoutMs: 2000 });
      assert.ok(result.outcome === "response" && result.status === 200, JSON.stringify(result));
    }
    assert.deepEqual(server.connections.map((c) => c.requests), [1, 1], answer.split("\r\n")[0]);
    connections.closeAll();
  }
  // A body read to the limit ends the connection too.
  using endless = rawServer(() => `HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n${"x".repeat(100_000)}`);
  const connections = connectionsForOneRun();
  for (let i = 0; i < 2; i++) await sent(`http://127.0.0.1:${endless.port}/in`, { connections, timeoutMs: 2000, maxReadBytes: 4096 });
  assert.equal(endless.connections.length, 2);
  connections.closeAll();
});
