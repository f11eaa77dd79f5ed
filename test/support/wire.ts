// A TCP relay between a test's clients and Postgres (or the pooler) that reads what the
// clients send: each frontend message of the extended protocol and each simple Query, and the client's round
// trips, the times it wrote again after an answer had come back.
//
// Answers are held back for `answerDelayMs` before they are passed on. That makes the
// count of round trips exact: whatever a client writes without waiting for an answer
// (postgres.js flushes one pipelined batch in a write or two, in the same turn of the
// event loop) reaches the relay before any answer to it can, so a write after an answer
// is always one the client waited for.
import { Buffer } from "node:buffer";

export type FrontendMessage =
  | { type: "Parse"; statement: string; sql: string; parameterTypes: number }
  | { type: "Bind"; statement: string; parameters: number }
  | { type: "Query"; sql: string }
  | { type: "Describe" | "Execute" | "Sync" | "Flush" | "Other"; code: string };

export type WireRelay = {
  // The target's URL, with the relay's host and port.
  url: string;
  messages: FrontendMessage[];
  roundTrips: number;
  // Forgets what was recorded: what follows is counted from nothing.
  reset(): void;
  close(): Promise<void>;
};

const names: Record<string, FrontendMessage["type"]> = { D: "Describe", E: "Execute", S: "Sync", H: "Flush" };
// The untyped messages a client may send first: SSLRequest and GSSENCRequest wait for a
// one-byte answer; anything else is the startup message, after which every message is typed.
const NEGOTIATIONS = new Set([80877103, 80877104]);

export function wireRelay(target: string, answerDelayMs = 25): WireRelay {
  const to = new URL(target);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((listener.addr as Deno.NetAddr).port);
  const open = new Set<Deno.Conn>();
  const pumps: Promise<void>[] = [];
  // Whether an answer was passed on since the clients last wrote.
  let answered = true;
  const relay: WireRelay = {
    url: url.href,
    messages: [],
    roundTrips: 0,
    reset() {
      relay.messages = [];
      relay.roundTrips = 0;
      answered = true;
    },
    async close() {
      listener.close();
      for (const conn of open) close(conn);
      await Promise.allSettled(pumps);
      await accepting.catch(() => {});
    },
  };

  const accepting = (async () => {
    for await (const client of listener) {
      const server = await Deno.connect({ hostname: to.hostname, port: Number(to.port || 5432) });
      open.add(client).add(server);
      const messages = frontendReader((message) => relay.messages.push(message));
      pumps.push(
        pump(client, server, (chunk) => {
          if (answered) relay.roundTrips++;
          answered = false;
          messages(chunk);
        }),
        pump(server, client, async () => {
          await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
          answered = true;
        }),
      );
    }
  })();
  return relay;
}

// Copies `from` to `to`, each chunk after `seen` has seen it; ends both when either ends.
async function pump(from: Deno.Conn, to: Deno.Conn, seen: (chunk: Uint8Array) => void | Promise<void>): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const read = await from.read(buffer);
      if (read === null) break;
      const chunk = buffer.slice(0, read);
      await seen(chunk);
      for (let written = 0; written < chunk.length;) written += await to.write(chunk.subarray(written));
    }
  } catch {
    // The other side closed: nothing more to pass on.
  } finally {
    for (const conn of [from, to]) close(conn);
  }
}

function close(conn: Deno.Conn) {
  try {
    conn.close();
  } catch {
    // Closed already, by the pump of the other direction.
  }
}

// Splits a client's stream into messages, however the chunks cut them.
function frontendReader(record: (message: FrontendMessage) => void): (chunk: Uint8Array) => void {
  let pending = Buffer.alloc(0);
  let started = false;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (!started) {
        if (pending.length < 8) return;
        const length = pending.readUInt32BE(0);
        if (pending.length < length) return;
        started = !NEGOTIATIONS.has(pending.readUInt32BE(4));
        pending = pending.subarray(length);
        continue;
      }
      if (pending.length < 5) return;
      const length = pending.readUInt32BE(1);
      if (pending.length < 1 + length) return;
      const code = String.fromCharCode(pending[0]!);
      record(frontendMessage(code, pending.subarray(5, 1 + length)));
      pending = pending.subarray(1 + length);
    }
  };
}

function frontendMessage(code: string, body: Buffer): FrontendMessage {
  const cstring = (at: number) => {
    const end = body.indexOf(0, at);
    return { text: body.toString("utf8", at, end), next: end + 1 };
  };
  if (code === "P") {
    const statement = cstring(0);
    const sql = cstring(statement.next);
    return { type: "Parse", statement: statement.text, sql: sql.text, parameterTypes: body.readUInt16BE(sql.next) };
  }
  if (code === "B") {
    const portal = cstring(0);
    const statement = cstring(portal.next);
    const formats = body.readUInt16BE(statement.next);
    return { type: "Bind", statement: statement.text, parameters: body.readUInt16BE(statement.next + 2 + formats * 2) };
  }
  if (code === "Q") return { type: "Query", sql: cstring(0).text };
  return { type: names[code] ?? "Other", code } as FrontendMessage;
}
