// An API key's secret is in the response that issued it and nowhere else: not in a
// list, a read, an error, a replayed answer, or any log the stack writes.
import assert from "node:assert/strict";
import { sleep } from "../../local/capture.ts";
import { withFixture } from "../support/api.ts";
import { createStay } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";
import { stackLogs } from "../support/logs.ts";

async function responseText(response: Response): Promise<string> {
  return `${[...response.headers].map(([name, value]) => `${name}: ${value}`).join("\n")}\n${await response.text()}`;
}

Deno.test("the secret is in the issuing response only: never in a list, read, error, replay or log line", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("secrecy");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const secret = key.secret.slice(22);
    assert.equal(secret.length, 43);
    const tampered = `${key.secret.slice(0, -1)}${key.secret.endsWith("A") ? "B" : "A"}`;
    const payment = { amount: 100, currency: "EUR", method: "card", externalReference: "secrecy-1" };
    const pay = `/reservations/${stay.reservation.id}/payments`;

    const answers: Record<string, Response> = {
      "the key list": await a.ownerClient.get("/api-keys"),
      "the key read": await a.ownerClient.get(`/api-keys/${key.id}`),
      "a reservation list": await external("GET", "/reservations", key.secret),
      "a bad query": await external("GET", "/reservations?limit=nine", key.secret),
      "an unknown reservation": await external("GET", `/reservations/${crypto.randomUUID()}`, key.secret),
      "a payment": await external("POST", pay, key.secret, { body: payment, headers: { "idempotency-key": "secrecy" } }),
      "its replay": await external("POST", pay, key.secret, { body: payment, headers: { "idempotency-key": "secrecy" } }),
      "a conflicting retry": await external("POST", pay, key.secret, { body: { ...payment, amount: 101 } }),
      "a wrong currency": await external("POST", pay, key.secret, { body: { ...payment, currency: "USD" } }),
      "a malformed body": await external("POST", pay, key.secret, { body: { ...payment, note: key.secret } }),
      "a tampered key": await external("GET", "/reservations", tampered, { via: "bearer" }),
      "a key with more after it": await external("GET", "/reservations", `${key.secret}x`),
    };
    assert.equal((await a.ownerClient.delete(`/api-keys/${key.id}`)).status, 204);
    answers["a revoked key"] = await external("GET", "/reservations", key.secret);

    for (const [label, response] of Object.entries(answers)) {
      const text = await responseText(response);
      assert.ok(!text.includes(secret), `${label} (${response.status}) shows the secret`);
    }
    assert.equal(answers["a malformed body"]!.status, 400);

    // The logs are read as they are now: a line Postgres logs after the requests must be there.
    const canary = `secrecy-canary-${crypto.randomUUID()}`;
    await sql.unsafe(`do $$ begin raise warning '${canary}'; end $$`);
    let logs = await stackLogs();
    for (let tries = 0; !logs["postgres.log"]?.includes(canary) && tries < 20; tries++) {
      await sleep(100);
      logs = await stackLogs();
    }
    assert.ok(logs["postgres.log"]?.includes(canary), "the Postgres log is the live one");
    assert.ok("fn-api.log" in logs && "gateway.log" in logs, Object.keys(logs).join(", "));
    for (const [name, text] of Object.entries(logs)) {
      assert.ok(!text.includes(secret), `${name} holds the secret`);
    }
  }));
