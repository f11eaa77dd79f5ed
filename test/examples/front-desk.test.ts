// The front-desk example (examples/front-desk) in headless Chromium (Debian's chromium
// package; npm test installs it), driven by puppeteer-core: a receptionist signs up in the
// page, is added to a tenant as staff, checks a guest arriving today in and out, sees the
// check-in's alert arrive in the inbox and signs out; another searches a weekend's
// availability, sees a plan's calendar total or the restriction that stops it, and books
// a stay for a guest. What the page shows is checked in its
// DOM, what it did in the API and the database. Every request the page makes stays on
// loopback. And a page from an origin the API does not grant (CORS_ALLOWED_ORIGINS) may sign
// in at Auth, as from any origin, but the browser refuses it the API's answers.
import assert from "node:assert/strict";
import type { Browser, Page } from "puppeteer-core";
import { dateIn } from "../../examples/front-desk/src/dates.ts";
import { call, expectProblem, expectStatus, listPage, representation, type Schemas, withFixture } from "../support/api.ts";
import {
  addDays,
  createGuest,
  createProperty,
  createRatePlan,
  createRoomType,
  createUnit,
  readReservation,
  stepReservation,
} from "../support/domain.ts";
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

// Sets a form field's value, as the receptionist's typing would leave it (a date field's
// typing depends on the browser's locale; its value does not).
const fill = (page: Page, selector: string, value: string) =>
  page.$eval(selector, (element, text) => void ((element as unknown as { value: string }).value = text), value);

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await shown(page, "#sign-in");
  await page.type("#email", email);
  await page.type("#password", password);
  await page.click("#sign-in-button");
}

// Fills the search form, submits it and waits until the page shows that stay's offers.
async function search(page: Page, stay: { arrival: string; departure: string; adults: number; children: number }, summary: string) {
  await fill(page, "#search-arrival", stay.arrival);
  await fill(page, "#search-departure", stay.departure);
  await fill(page, "#search-adults", String(stay.adults));
  await fill(page, "#search-children", String(stay.children));
  await page.click("#search-button");
  try {
    await waitForText(page, "#offers-stay", summary);
  } catch (error) {
    throw new Error(`the search for ${summary} was not shown; the page's error: ${await pageError(page)}`, { cause: error });
  }
}

// The first Friday at least `days` after `date`.
function fridayAfter(date: string, days: number): string {
  let day = addDays(date, days);
  while (new Date(`${day}T00:00:00Z`).getUTCDay() !== 5) day = addDays(day, 1);
  return day;
}

// "555.00 EUR": minor units of a two-digit currency, as the page writes them.
const euros = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, "0")} EUR`;

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

Deno.test("in Chromium the front desk finds a weekend stay, books it for a guest at the calendar's price and says why a plan does not sell", () =>
  withFixture(async ({ tenant, memberOf }) => {
    // A property with a double of two rooms and one plan for it: a weekday price, a
    // weekend price set on the calendar, a charge for a child above the two the price is
    // for, and a Thursday closed to arrival. The weekend is months ahead, clear of any
    // stay and of today.
    const t = await tenant("front-desk-search");
    const owner = t.ownerClient;
    const receptionist = await memberOf(t, "staff", "front-desk-search-staff");
    const property = await createProperty(owner, { name: "Harbour House", timezone: TIME_ZONE, currency: "EUR" });
    const double = await createRoomType(owner, property.id, { code: "DBL", name: "Double", standardOccupancy: 2, maxOccupancy: 3 });
    for (const name of ["201", "202"]) await createUnit(owner, property.id, { roomTypeId: double.id, name, capacity: 3 });
    const prices = { weekday: 12000, weekend: 18000, extraChild: 2500 };
    const plan = await createRatePlan(owner, property.id, {
      code: "BAR", name: "Best available", currency: "EUR", roomTypeId: double.id,
      nightlyPrice: prices.weekday, extraChildPrice: prices.extraChild,
    });
    const today = dateIn(TIME_ZONE, new Date());
    const friday = fridayAfter(today, 60);
    const thursday = addDays(friday, -1);
    const monday = addDays(friday, 3);
    await expectStatus("PATCH", "/v1/rate-calendar", await owner.patch("/rate-calendar", {
      changes: [
        { ratePlanId: plan.id, from: friday, to: addDays(friday, 6), weekdays: ["fri", "sat"], price: prices.weekend },
        { ratePlanId: plan.id, from: thursday, to: thursday, closedToArrival: true },
      ],
    }), 200);
    const party = { adults: 2, children: 1 };
    // Friday and Saturday at the weekend's price, Sunday at the plan's, each with the child.
    const nightly = [friday, addDays(friday, 1), addDays(friday, 2)].map((night) =>
      ([5, 6].includes(new Date(`${night}T00:00:00Z`).getUTCDay()) ? prices.weekend : prices.weekday) + prices.extraChild
    );
    const total = nightly.reduce((sum, amount) => sum + amount, 0);
    assert.deepEqual(nightly, [prices.weekend + prices.extraChild, prices.weekend + prices.extraChild, prices.weekday + prices.extraChild]);
    const bruno = await createGuest(owner, { firstName: "Bruno", lastName: "Costa" });
    const ana = await createGuest(owner, { firstName: "Ana", lastName: "Silva" });

    const recorded: Recorded = { requests: [], bearers: [] };
    await withChromium(async (browser) => {
      const page = await openPage(browser, recorded);
      await page.goto(stack.frontDeskUrl);
      await signIn(page, receptionist.email, receptionist.password);
      await shown(page, "#search");
      assert.equal(await valueOf(page, "#property"), property.id);
      // The search starts from the property's today, for one night.
      assert.deepEqual([await valueOf(page, "#search-arrival"), await valueOf(page, "#search-departure")], [today, addDays(today, 1)]);
      assert.deepEqual((await page.$$eval("#book-guest option", (options) => options.map((option) => (option as unknown as { value: string }).value))).sort(),
        [ana.id, bruno.id].sort(), "the tenant's guests to book for");

      const typeRow = `#offers-list > li[data-room-type-id="${double.id}"]`;
      const planRow = `${typeRow} li[data-rate-plan-id="${plan.id}"]`;

      // Arriving on the Thursday: the plan does not sell the stay, and the page says why.
      await search(page, { arrival: thursday, departure: monday, ...party }, `${thursday} → ${monday} · 4 nights · 2 adults, 1 child`);
      assert.equal(await textOf(page, `${typeRow} .rooms-left`), "2 rooms left");
      assert.equal(await page.$eval(planRow, (line) => (line as unknown as { dataset: { bookable: string } }).dataset.bookable), "false");
      assert.equal(await textOf(page, `${planRow} .restrictions`), `closed to arrival on ${thursday}`);
      assert.equal(await page.$$eval(`${planRow} button, ${planRow} .total`, (found) => found.length), 0, "no total and no Book for a plan that does not sell");

      // Friday to Monday: both doubles left, the plan's total as the calendar prices it.
      await search(page, { arrival: friday, departure: monday, ...party }, `${friday} → ${monday} · 3 nights · 2 adults, 1 child`);
      assert.equal(await textOf(page, `${typeRow} .rooms-left`), "2 rooms left");
      assert.equal(await textOf(page, `${planRow} .total`), euros(total));
      assert.equal(await page.$eval(`${planRow} button`, (button) => (button as unknown as { disabled: boolean }).disabled), false);

      // Booked for Ana: a stay of the double on the plan, without a unit, priced by the calendar.
      await page.select("#book-guest", ana.id);
      await page.click(`${planRow} button`);
      await waitForText(page, `${typeRow} .rooms-left`, "1 room left");
      const [booked, ...others] = (await listPage<Schemas["Reservation"]>(owner, "/v1/reservations", `?propertyId=${property.id}`)).data;
      assert.ok(booked, "the page made a reservation");
      assert.deepEqual(others, [], "one reservation");
      assert.deepEqual(
        [booked.roomTypeId, booked.ratePlanId, booked.guestId, booked.checkIn, booked.checkOut, booked.adults, booked.children],
        [double.id, plan.id, ana.id, friday, monday, party.adults, party.children],
      );
      assert.deepEqual([booked.unitId, booked.totalAmount, booked.currency, booked.priceOverridden, booked.status], [null, total, "EUR", false, "confirmed"]);
      assert.equal(await textOf(page, "#notice"),
        `Booked ${booked.confirmationCode} for Ana Silva: Double, Best available, ${friday} → ${monday}, ${euros(total)}.`);

      // Another desk takes the last double; the page, which still offers it, is refused
      // with the API's problem and then shows none left.
      const stay = {
        propertyId: property.id, roomTypeId: double.id, ratePlanId: plan.id, guestId: bruno.id,
        checkIn: friday, checkOut: monday, ...party,
      };
      await expectStatus("POST", "/v1/reservations", await owner.post("/reservations", stay, representation), 201);
      assert.equal(await textOf(page, `${typeRow} .rooms-left`), "1 room left");
      await page.click(`${planRow} button`);
      await waitForText(page, `${typeRow} .rooms-left`, "No room left");
      const refused = await expectProblem("POST", "/v1/reservations", await owner.post("/reservations", stay), 409, "no-availability");
      assert.equal(await textOf(page, "#error"), refused.detail);
      assert.ok(await isHidden(page, "#notice"), "the refusal replaces the booking's notice");
      assert.equal(await page.$eval(`${planRow} button`, (button) => (button as unknown as { disabled: boolean }).disabled), true);
      assert.equal((await listPage(owner, "/v1/reservations", `?propertyId=${property.id}`)).data.length, 2, "the refused booking made nothing");
    });

    const urls = recorded.requests.flat();
    assert.ok(urls.some((url) => url.startsWith(`${stack.v1}/availability`)), "the page called the availability");
    assert.deepEqual(urls.filter((url) => !isLoopback(url)), [], "requests of the page outside loopback");
  }));
