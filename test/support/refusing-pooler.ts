// A pooler scripted to do what PgBouncer 1.18 does to a new client while Postgres restarts
// (its log: "server login has been failing, try again later"): it answers the client's
// startup itself, from what it knows of the server, then answers the first query with an
// 08P01 error and closes the connection. On a new postgres.js connection that first query
// is its own array-type query, whose promise nobody holds. With `relayLaterTo`, only the
// first connection is refused, and every later one is carried to that Postgres as it is.
const encoder = new TextEncoder();

function message(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + body.length);
  out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}

function int32s(...values: number[]): Uint8Array {
  const out = new Uint8Array(4 * values.length);
  values.forEach((value, i) => new DataView(out.buffer).setInt32(4 * i, value));
  return out;
}

const cstrings = (...values: string[]) => encoder.encode(values.map((value) => `${value}\0`).join(""));

const startupAnswer = [
  message("R", int32s(0)), // AuthenticationOk
  message("S", cstrings("server_version", "15.18")),
  message("S", cstrings("client_encoding", "UTF8")),
  message("K", int32s(4242, 1)),
  message("Z", encoder.encode("I")),
];

const refusal = message("E", cstrings("SERROR", "C08P01", "Mserver login has been failing, try again later (server_login_retry)", ""));

// Reads the client's startup message (length-prefixed, no type byte), answers it, waits
// for any one message after it, and refuses that.
async function refuse(client: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  let received = 0;
  const readAtLeast = async (count: number) => {
    while (received < count) {
      const read = await client.read(buffer.subarray(received));
      if (read === null) throw new Error("the client left");
      received += read;
    }
  };
  await readAtLeast(4);
  const startupLength = new DataView(buffer.buffer).getInt32(0);
  await readAtLeast(startupLength);
  received -= startupLength;
  buffer.copyWithin(0, startupLength, startupLength + received);
  for (const part of startupAnswer) await client.write(part);
  await readAtLeast(1);
  await client.write(refusal);
  client.close();
}

export function refusingPooler(options: { relayLaterTo?: URL } = {}) {
  const target = options.relayLaterTo;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const served = (async () => {
    for await (const client of listener) {
      if (target && connections++ > 0) {
        void Deno.connect({ hostname: target.hostname, port: Number(target.port) }).then((server) =>
          Promise.allSettled([client.readable.pipeTo(server.writable), server.readable.pipeTo(client.writable)])
        );
        continue;
      }
      void refuse(client).catch(() => {
        try {
          client.close();
        } catch {
          // already closed
        }
      });
    }
  })();
  const login = target ? `${target.username}:${target.password}` : "postgres:postgres";
  return {
    url: `postgresql://${login}@127.0.0.1:${(listener.addr as Deno.NetAddr).port}${target?.pathname ?? "/postgres"}`,
    async close() {
      listener.close();
      await served.catch(() => {});
    },
  };
}
