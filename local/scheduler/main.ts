// The local stand-in for pg_cron + pg_net: calls one worker function (notifications
// or webhooks) through the gateway on the cadence the hosted schedule uses.
import { readFlags, requireFlag } from "../args.ts";
import { sleep } from "../capture.ts";

const flags = readFlags(Deno.args);
const url = requireFlag(flags, "url");
const key = requireFlag(flags, "key");
const everyMs = Number(requireFlag(flags, "every-seconds")) * 1000;

for (;;) {
  try {
    const response = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    const text = await response.text();
    if (!response.ok || !/"read":0\b/.test(text)) console.log(JSON.stringify({ status: response.status, summary: text }));
  } catch (error) {
    console.error(JSON.stringify({ level: "warn", message: `the worker did not answer: ${String(error)}` }));
  }
  await sleep(everyMs);
}
