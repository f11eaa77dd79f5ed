// The front-desk example (examples/front-desk) in headless Chromium (Debian's chromium
// package; npm test installs it), driven by puppeteer-core: a receptionist signs up in the
// page, is added to a tenant as staff, checks a guest arriving today in and out, sees the
// check-in's alert arrive in the inbox and signs out. What the page shows is checked in its
// DOM, what it did in the API and the database. Every request the page makes stays on
// loopback. And a page from an origin the API does not grant (CORS_ALLOWED_ORIGINS) may sign
// in at Auth, as from any origin, but the browser refuses it the API's answers.
import assert from "node:assert/strict";
import type { Browser, Page } from "puppeteer-core";
import { dateIn } from "../../examples/front-desk/src/dates.ts";
import { call, expectStatus, representation, type Schemas, withFixture } from "../support/api.ts";
import { addDays, createGuest, createProperty, createUnit, readReservation, stepReservation } from "../support/domain.ts";
import { isLoopback, recordedPage, withChromium } from "../support/browser.ts";
import { drainQueue, expandEvents, runWorker } from "../support/notifications.ts";
import { stack } from "../support/stack.ts";

const TIME_ZONE = "Europe/Lisbon";
const WAIT_MS = 15_000;
// The screenshot of the arrivals the READMEs show: each run writes the page as it is now.
const SCREENSHOT = "docs/images/front-desk-arrivals.png";
const root = new URL("../../", import.meta.url);

// Every request the test's pages make (one list a page), and the bearer tokens they sent to the API.
type Recorded = { requests: string[][]; bearers: string[] };

async function openPage(browser: Browser, recorded: Recorded): Promise<Page> {
  const { page, requests } = await recordedPage(browser);
  recorded.requests.push(requests);
  page.setDefaultTimeout(WAIT_MS);
  page.on("request", (request) => {
    const authorization = request.headers()["authorization"];
    if (request.url().startsWith(stack.v1) && authorization?.startsWith("Bearer ")) {
      recorded.bearers.push(authorization.slice("Bearer ".length));
    }
  });
  return page;
}

// What the page says went wrong, for a failed wait's message.
async function pageError(page: Page): Promise<string> {
  try {
    return await page.$eval("#error", (element) => element.textContent ?? "");
  } catch (error) {
    return `(no #error: ${error instanceof Error ? error.message : error})`;
  }
}

// Waits until the element is shown.
async function shown(page: Page, selector: string): Promise<void> {
  try {
    await page.waitForSelector(`${selector}:not([hidden])`, { visible: true });
  } catch (error) {
    throw new Error(`${selector} was not shown within ${WAIT_MS} ms; the page's error: ${await pageError(page)}`, { cause: error });
  }
}

const textOf = (page: Page, selector: string) => page.$eval(selector, (element) => element.textContent ?? "");

// The test runs without the DOM's declarations: what it reads in the page is typed here.
const valueOf = (page: Page, selector: string) =>
  page.$eval(selector, (element) => (element as unknown as { value: string }).value);
const isHidden = (page: Page, selector: string) =>
  page.$eval(selector, (element) => (element as unknown as { hidden: boolean }).hidden);
const waitForText = (page: Page, selector: string, text: string) =>
  page.waitForFunction(`document.querySelector(${JSON.stringify(selector)})?.textContent === ${JSON.stringify(text)}`);

// The guests a list of stays shows, sorted: stays of one arrival date are listed by their
// ids, which are random.
const guestsIn = (page: Page, list: string) =>
  page.$$eval(`${list} li .guest`, (names) => names.map((name) => name.textContent ?? "").sort());

// Waits until `list` shows exactly these guests (sorted).
async function waitForGuests(page: Page, list: string, guests: string[]): Promise<void> {
  try {
    await page.waitForFunction(
      `JSON.stringify([...document.querySelectorAll(${JSON.stringify(`${list} li .guest`)})]` +
        `.map((name) => name.textContent).sort()) === ${JSON.stringify(JSON.stringify([...guests].sort()))}`,
      { timeout: WAIT_MS },
    );
  } catch {
    assert.deepEqual(await guestsIn(page, list), [...guests].sort(), `${list} after ${WAIT_MS} ms`);
  }
}

// What a fetch from the page's own script gets: the status, or the error fetch rejected with.
function fetchFromPage(page: Page, url: string, headers: Record<string, string>) {
  return page.evaluate(async (target: string, sent: Record<string, string>) => {
    try {
      const response = await fetch(target, { headers: sent });
      return { status: response.status, error: null };
    } catch (error) {
      return { status: null, error: error instanceof Error ? error.name : String(error) };
    }
  }, url, headers);
}

Deno.test("in Chromium the front desk signs a receptionist up, checks a guest in and out, shows the check-in's alert and signs out", () =>
  withFixture(async ({ sql, cleanup, tenant }) => {
    const allowed = new URL(stack.frontDeskUrl).origin;
    assert.ok(stack.corsAllowedOrigins.includes(allowed), `CORS_ALLOWED_ORIGINS lists the front desk: ${stack.corsAllowedOrigins}`);
    // The same server under another name: another origin, which the API does not grant.
    const foreign = new URL(stack.frontDeskUrl);
    foreign.hostname = "localhost";
    assert.ok(!stack.corsAllowedOrigins.includes(foreign.origin), `${foreign.origin} is not granted`);

    // Earlier tests' jobs run first, so the runs below deliver this test's alert.
    await drainQueue(sql);

    // A manager's tenant: a property with three rooms, two guests arriving today and one
    // who arrived today already, made through the API as the owner.
    const t = await tenant("front-desk");
    const owner = t.ownerClient;
    const property = await createProperty(owner, { name: "Harbour House", timezone: TIME_ZONE });
    const today = dateIn(TIME_ZONE, new Date());
    const stays = new Map<string, Schemas["Reservation"]>();
    for (const [room, firstName, lastName, nights] of [
      ["Room 101", "Ana", "Silva", 2],
      ["Room 102", "Bruno", "Costa", 3],
      ["Room 103", "Carla", "Dias", 1],
    ] as const) {
      const unit = await createUnit(owner, property.id, { name: room });
      const guest = await createGuest(owner, { firstName, lastName });
      const response = await owner.post("/reservations", {
        propertyId: property.id, unitId: unit.id, guestId: guest.id, checkIn: today, checkOut: addDays(today, nights),
        status: "confirmed", totalAmount: 12000 * nights,
      }, representation);
      stays.set(`${firstName} ${lastName}`, await expectStatus<Schemas["Reservation"]>("POST", "/v1/reservations", response, 201));
    }
    const ana = stays.get("Ana Silva")!;
    // Carla is in house before the receptionist joins: her check-in alerts no one of theirs,
    // once the worker has made her check-in's event into its notifications, as a running
    // schedule would have a moment after it.
    await stepReservation(owner, stays.get("Carla Dias")!.id, "check-in");
    await expandEvents();

    const email = `frontdesk-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const password = `desk-${crypto.randomUUID().slice(0, 8)}-1`;
    const recorded: Recorded = { requests: [], bearers: [] };
    try {
      await withChromium(async (browser) => {
        const page = await openPage(browser, recorded);
        await page.goto(stack.frontDeskUrl);

        // Sign up through supabase-js in the page: Auth's CORS (through the gateway) lets it.
        await shown(page, "#sign-in");
        await page.type("#email", email);
        await page.type("#password", password);
        await page.click("#sign-up-button");
        await shown(page, "#no-tenant");
        assert.equal(await textOf(page, "#signed-in-as"), email);
        assert.equal(await textOf(page, "#no-tenant-email"), email);
        const [user] = await sql<{ id: string }[]>`select id::text from auth.users where email = ${email}`;
        assert.ok(user, "Auth has the user the page signed up");
        cleanup.users.add(user.id);

        // The manager adds the receptionist as staff; a refresh shows the tenant and its property.
        const added = await owner.post(`/tenants/${t.tenantId}/members`, { email, role: "staff" }, representation);
        await expectStatus("POST", "/v1/tenants/{tenantId}/members", added, 201);
        await page.click("#refresh");
        await shown(page, "#lists");
        assert.equal(await valueOf(page, "#tenant"), t.tenantId);
        assert.equal(await valueOf(page, "#property"), property.id);
        await waitForGuests(page, "#arrivals-list", ["Ana Silva", "Bruno Costa"]);
        await waitForGuests(page, "#in-house-list", ["Carla Dias"]);
        assert.equal(await textOf(page, "#arrivals-date"), today);
        const anaRow = `#arrivals-list li[data-reservation-id="${ana.id}"]`;
        assert.deepEqual(await page.$$eval(`${anaRow} .details`, (lines) => lines.map((line) => line.textContent)), [
          `Room 101 · ${ana.confirmationCode}`,
          `${today} → ${addDays(today, 2)}`,
        ]);
        // The page down to the end of the lists.
        const lists = await (await page.$("#lists"))?.boundingBox();
        assert.ok(lists, "the lists are laid out");
        const screenshot = await page.screenshot({ type: "png", clip: { x: 0, y: 0, width: page.viewport()?.width ?? 1366, height: Math.ceil(lists.y + lists.height + 24) } });
        assert.deepEqual([...screenshot.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "a PNG");
        await Deno.writeFile(new URL(SCREENSHOT, root), screenshot);

        // Check-in: Ana moves from the arrivals to the house, in the page and in the API.
        await page.click(`${anaRow} button`);
        await waitForGuests(page, "#in-house-list", ["Ana Silva", "Carla Dias"]);
        await waitForGuests(page, "#arrivals-list", ["Bruno Costa"]);
        assert.equal(await textOf(page, "#notice"), "Ana Silva is checked in.");
        const checkedIn = (await readReservation(owner, ana.id)).body;
        assert.equal(checkedIn.status, "checked_in");
        assert.ok(checkedIn.checkedInAt, "the check-in's time is recorded");

        // The worker delivers the check-in's alert to the staff member's inbox; the page,
        // polling, shows it. The scheduler is off during the tests: the test runs the worker.
        // A run delivers what is due; one whose job waits on an earlier one of the stay
        // comes in a later run, so the worker runs until the page shows the alert.
        const alert = `#inbox-list li[data-template-key="check_in_alerts"].unread`;
        let shownAlert = false;
        for (let run = 0; run < 5 && !shownAlert; run++) {
          await runWorker();
          shownAlert = await page.waitForSelector(alert, { timeout: 5_000 }).then(() => true, () => false);
        }
        assert.ok(shownAlert, `the check-in's alert did not appear in the page; its error: ${await pageError(page)}`);
        assert.match(await textOf(page, `${alert} .title`), /Ana Silva/);
        await waitForText(page, "#unread-count", "1");
        const [stored] = await sql<{ count: number }[]>`
          select count(*)::int as count from public.inbox_messages
          where user_id = ${user.id} and tenant_id = ${t.tenantId} and template_key = 'check_in_alerts' and read_at is null`;
        assert.equal(stored!.count, 1, "the alert is the receptionist's, unread");
        await page.click("#mark-all-read");
        await waitForText(page, "#unread-count", "0");
        await page.waitForSelector(`#inbox-list li[data-template-key="check_in_alerts"]:not(.unread)`);

        // Check-out: Ana leaves the house.
        await page.click(`#in-house-list li[data-reservation-id="${ana.id}"] button`);
        await waitForGuests(page, "#in-house-list", ["Carla Dias"]);
        assert.equal(await textOf(page, "#notice"), "Ana Silva is checked out.");
        const [left] = await sql<{ status: string; checked_out_at: Date | null }[]>`
          select status, checked_out_at from public.reservations where id = ${ana.id}`;
        assert.equal(left!.status, "checked_out");
        assert.ok(left!.checked_out_at, "the check-out's time is recorded");

        // The session's token, as the page last sent it.
        const token = recorded.bearers.at(-1);
        assert.ok(token, "the page sent the session's token to the API");

        // From the granted origin the page reads the API's answers, a refusal included.
        assert.deepEqual(await fetchFromPage(page, `${stack.v1}/health`, {}), { status: 200, error: null });
        assert.deepEqual(await fetchFromPage(page, `${stack.v1}/tenants`, { authorization: "Bearer not-a-token" }), {
          status: 401,
          error: null,
        });

        // Sign-out ends the session at Auth: the token the page sent is refused from now on.
        assert.equal((await call("GET", "/me", { token })).status, 200);
        await page.click("#sign-out");
        await shown(page, "#sign-in");
        assert.ok(await isHidden(page, "#desk"), "the desk is hidden");
        assert.equal((await call("GET", "/me", { token })).status, 401, "the signed-out session's token");

        // Another origin: the same app signs in at Auth, which answers any origin, as on a
        // hosted project; the API answers it nothing the browser lets the page read.
        const elsewhere = await openPage(browser, recorded);
        await elsewhere.goto(foreign.href);
        await shown(elsewhere, "#sign-in");
        await elsewhere.type("#email", email);
        await elsewhere.type("#password", password);
        await elsewhere.click("#sign-in-button");
        await shown(elsewhere, "#desk");
        await shown(elsewhere, "#error");
        assert.match(await textOf(elsewhere, "#error"), /The API could not be reached from this page \(.*\)/);
        assert.equal(await elsewhere.$$eval("#tenant option", (options) => options.length), 0, "no tenant was read");
        for (const [path, headers] of [["/health", {}], ["/tenants", { authorization: "Bearer not-a-token" }]] as const) {
          assert.deepEqual(await fetchFromPage(elsewhere, `${stack.v1}${path}`, headers), { status: null, error: "TypeError" },
            `fetch ${path} from ${foreign.origin}`);
        }
        await elsewhere.click("#sign-out");
        await shown(elsewhere, "#sign-in");
      });
    } finally {
      // A user the page signed up before a step failed is removed too.
      for (const { id } of await sql<{ id: string }[]>`select id::text from auth.users where email = ${email}`) cleanup.users.add(id);
    }

    const urls = recorded.requests.flat();
    assert.ok(urls.includes(`${stack.frontDeskUrl}/app.js`), `the page's bundle: ${urls.join(", ")}`);
    assert.ok(urls.some((url) => url.startsWith(`${stack.apiUrl}/auth/v1/`)), "the page called Auth");
    assert.ok(urls.some((url) => url.startsWith(`${stack.v1}/reservations`)), "the page called the API");
    assert.deepEqual(urls.filter((url) => !isLoopback(url)), [], "requests of the page outside loopback");
  }));

Deno.test("the front desk's server serves the built app, its config for this stack and nothing else, under a policy that lets it reach only the project", async () => {
  const page = await fetch(stack.frontDeskUrl);
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  assert.match(await page.text(), /<script type="module" src="app.js"><\/script>/);
  const policy = page.headers.get("content-security-policy") ?? "";
  assert.match(policy, new RegExp(`connect-src 'self' ${new URL(stack.apiUrl).origin};`));
  assert.match(policy, /default-src 'none'; script-src 'self';/);

  const config = await fetch(`${stack.frontDeskUrl}/config.json`);
  assert.deepEqual(await config.json(), { supabaseUrl: stack.apiUrl, anonKey: stack.anonKey });
  const bundle = await fetch(`${stack.frontDeskUrl}/app.js`);
  assert.equal(bundle.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.ok((await bundle.text()).length > 10_000, "the bundle carries supabase-js and openapi-fetch");

  for (const path of ["/src/main.ts", "/../../.stack/stack.env", "/app.js.tmp", "/dist/app.js"]) {
    const refused = await fetch(`${stack.frontDeskUrl}${path}`);
    assert.equal(refused.status, 404, path);
    await refused.body?.cancel();
  }
  const posted = await fetch(`${stack.frontDeskUrl}/config.json`, { method: "POST", body: "{}" });
  assert.deepEqual([posted.status, posted.headers.get("allow")], [405, "GET, HEAD"]);
  await posted.body?.cancel();
});
