// The local stand-in for pg_cron + pg_net: calls one worker function (notifications
// or webhooks) through the gateway on the cadence the hosted schedule uses. As pg_cron
// does, a call starts every period whether or not the last one has answered (pg_net's
// request does not wait for the function), and it asks the run to follow the queue until
// its budget is spent, as the hosted job's body does.
import { readFlags, requireFlag } from "../args.ts";
import { sleep } from "../capture.ts";

const flags = readFlags(Deno.args);
const url = requireFlag(flags, "url");
const key = requireFlag(flags, "key");
const everyMs = Number(requireFlag(flags, "every-seconds")) * 1000;
// The hosted job's timeout_milliseconds.
const timeoutMs = 55_000;

async function call(): Promise<void> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ follow: true }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (!response.ok || !/"read":0\b/.test(text)) console.log(JSON.stringify({ status: response.status, summary: text }));
  } catch (error) {
    console.error(JSON.stringify({ level: "warn", message: `the worker did not answer: ${String(error)}` }));
  }
}

const start = Date.now();
for (let tick = 1;; tick++) {
  void call();
  // The next start on the period's grid, however long this one takes.
  await sleep(Math.max(0, start + tick * everyMs - Date.now()));
}
