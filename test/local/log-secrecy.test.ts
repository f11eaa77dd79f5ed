// No secret reaches any log the stack writes. A user signs up and signs in through the API
// with a password, and gets an access token and a refresh token, and refreshes them; an
// integration calls /v1/external with an API key; the notifications worker, called with the
// service role key, sends mail with the SendGrid key, is refused twice by the provider on
// the way, and logs it; the user signs out and tries the ended session's tokens. All of it
// runs while Postgres logs every statement of the api function and the worker with its
// parameters. Then every log in
// .stack/logs (the Postgres cluster's through its link) is searched for each secret's value.
//
// The search proves something only where the logs caught what happened, so the test first
// shows that each log a secret passes near did: Postgres logged the API's own statements
// with the user's id among their parameters, Auth logged the sign-in request, the worker
// logged the provider's refusals for this very notification, the SendGrid double logged
// the sends, and the api function's log is the running function's.
import assert from "node:assert/strict";
import { call, client, expectStatus, type Schemas, withFixture } from "../support/api.ts";
import { external, issueApiKey } from "../support/integration.ts";
import { createStay, stepReservation } from "../support/domain.ts";
import { callWorker, drainQueue, expireBackoff, jobsFor, mail, notificationFor, runWorker } from "../support/notifications.ts";
import { stack } from "../support/stack.ts";
import { stackLogs, withProjectStatementsLogged, writtenSince } from "../support/logs.ts";

type Session = Schemas["Session"];

// A JWT's signature: enough to forge nothing, but a log that cut the token would keep it.
const signatureOf = (jwt: string) => jwt.split(".")[2] ?? jwt;

Deno.test("no password, token, API key, service role key, SendGrid key, webhook signing key or VAPID private key reaches any log the stack writes", () =>
  withFixture(async ({ sql, cleanup }) => {
    const before = await stackLogs();
    const secrets: Record<string, string> = {
      "the service role key": stack.serviceRoleKey,
      "the service role key's signature": signatureOf(stack.serviceRoleKey),
      "the SendGrid API key": stack.notifications.sendGridApiKey,
      "the SMS provider's auth token": stack.notifications.sms.authToken,
      "the private key that signs the SendGrid double's event webhook": stack.sendGridWebhook.privateKey,
      "the push channel's VAPID private key": stack.notifications.push.vapidPrivateKey,
      "the JWT secret": stack.jwtSecret,
    };
    const email = `log-secrecy-${crypto.randomUUID().slice(0, 8)}@test.example`;
    const password = `Secret-${crypto.randomUUID()}`;
    secrets["the password"] = password;
    let userId = "";
    let notificationId = "";

    await withProjectStatementsLogged(sql, async () => {
      // Sign-up, sign-in and refresh through the API, which hands the password to Auth.
      const signedUp = await expectStatus<Schemas["SignUpResult"]>("POST", "/v1/auth/sign-up",
        await call("POST", "/auth/sign-up", { body: { email, password, fullName: "Lena Logs" } }), 201);
      userId = signedUp.user.id;
      cleanup.users.add(userId);
      const signedIn = await expectStatus<Session>("POST", "/v1/auth/sign-in",
        await call("POST", "/auth/sign-in", { body: { email, password } }), 200);
      const refreshed = await expectStatus<Session>("POST", "/v1/auth/refresh",
        await call("POST", "/auth/refresh", { body: { refreshToken: signedIn.refreshToken } }), 200);
      for (const [label, session] of [["sign-up", signedUp.session!], ["sign-in", signedIn], ["refresh", refreshed]] as const) {
        secrets[`the ${label}'s access token`] = session.accessToken;
        secrets[`the ${label}'s access token's signature`] = signatureOf(session.accessToken);
        secrets[`the ${label}'s refresh token`] = session.refreshToken;
      }
      // A wrong password for the right email, and the right one for an unknown email.
      assert.equal((await call("POST", "/auth/sign-in", { body: { email, password: `${password}x` } })).status, 401);
      assert.equal((await call("POST", "/auth/sign-in", { body: { email: `x${email}`, password } })).status, 401);

      const user = { id: userId, email, password, sessionId: "", token: refreshed.accessToken, refreshToken: refreshed.refreshToken };
      const tenant = await expectStatus<Schemas["Tenant"]>("POST", "/v1/tenants",
        await client(user).post("/tenants", { name: "Log Secrecy Stays" }, { prefer: "return=representation" }), 201);
      cleanup.tenants.add(tenant.id);
      const api = client(user, tenant.id);
      assert.equal((await api.get("/me")).status, 200);

      // An integration with an API key, as the header and as the bearer, and a tampered one.
      const stay = await createStay(api, { status: "confirmed" });
      const key = await issueApiKey(api, stay.property.id);
      secrets["the API key"] = key.secret;
      // live_<16-character key id>_<secret>: the secret by position, since it may hold "_" itself.
      secrets["the API key's secret part"] = key.secret.slice("live_".length + 16 + 1);
      assert.equal((await external("GET", "/reservations", key.secret)).status, 200);
      assert.equal((await external("POST", `/reservations/${stay.reservation.id}/payments`, key.secret, {
        via: "bearer",
        body: { amount: 100, currency: "EUR", method: "card", externalReference: `log-secrecy-${crypto.randomUUID()}` },
        headers: { "idempotency-key": "log-secrecy" },
      })).status, 201);
      // The secret with its last character changed (to one it is not: a secret ending in A
      // would otherwise be sent unchanged).
      const wrongLast = key.secret.endsWith("A") ? "B" : "A";
      assert.equal((await external("GET", "/reservations", `${key.secret.slice(0, -1)}${wrongLast}`)).status, 401);

      // The worker, with the service role key, and the SendGrid key in every send: a 500 it
      // will retry and a 401 it gives up on, both logged, then a send that is accepted.
      await drainQueue(sql);
      await stepReservation(api, stay.reservation.id, "check-in");
      notificationId = (await notificationFor(api, stay.reservation.id, "checkin_reminder")).id;
      await mail.script({ status: 500 });
      assert.equal((await runWorker()).retried, 1);
      await expireBackoff(sql, (await jobsFor(sql, notificationId))[0]!.msgId);
      await mail.script({
        status: 401,
        body: { errors: [{ field: null, message: "The provided authorization grant is invalid, expired, or revoked" }] },
      });
      assert.equal((await runWorker()).failed, 1);
      // The check-out's email, and the system notice of the failure for the owner's inbox.
      await stepReservation(api, stay.reservation.id, "check-out");
      assert.equal((await runWorker()).sent, 2);
      assert.equal((await callWorker({ authorization: `Bearer ${stack.serviceRoleKey}x` })).status, 401);

      // Signed out: the ended session's tokens are refused.
      assert.equal((await call("POST", "/auth/sign-out", { token: refreshed.accessToken })).status, 204);
      assert.equal((await call("GET", "/me", { token: refreshed.accessToken })).status, 401);
      assert.equal((await call("POST", "/auth/refresh", { body: { refreshToken: refreshed.refreshToken } })).status, 401);
    });

    const logs = await stackLogs();
    const written = writtenSince(before, logs);
    const sizes = Object.entries(logs).map(([name, text]) => `${name} ${text.length}`).join(", ");

    // The logs caught what happened.
    assert.match(written["postgres.log"] ?? "", /set_config\('request\.jwt\.claims'/,
      `Postgres logged the api function's statements (${sizes})`);
    assert.ok((written["postgres.log"] ?? "").includes(userId), "Postgres logged their parameters, the user's id among them");
    assert.match(written["auth.log"] ?? "", /"msg":"request completed".*"path":"\/token"/, "Auth logged the sign-in request");
    const worker = (written["fn-notifications-worker.log"] ?? "").split("\n").filter((line) => line.includes(notificationId));
    assert.ok(worker.some((line) => line.includes("will be retried") && line.includes("SendGrid answered 500")),
      `the worker logged the 500 it will retry: ${worker.join("\n")}`);
    assert.ok(worker.some((line) => line.includes("notification failed") && line.includes("SendGrid answered 401")),
      `the worker logged the 401 it gave up on: ${worker.join("\n")}`);
    assert.match(written["mail.log"] ?? "", /"path":"\/v3\/mail\/send","status":202/, "the SendGrid double logged the accepted send");
    assert.match(logs["fn-api.log"] ?? "", /"message":"the api function is serving"/, "fn-api.log is the running api function's");

    // And holds no secret, anywhere, from any run.
    const found: string[] = [];
    for (const [name, text] of Object.entries(logs)) {
      for (const [label, value] of Object.entries(secrets)) {
        assert.ok(value.length >= 12, `${label} is long enough to search for`);
        if (text.includes(value)) found.push(`${name} holds ${label}`);
      }
    }
    assert.deepEqual(found, [], `searched ${Object.keys(logs).length} logs (${sizes})`);
  }));
