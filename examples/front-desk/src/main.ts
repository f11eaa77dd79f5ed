// The front desk: a receptionist signs in (supabase-js against the project's Auth), picks a
// tenant and a property, sees today's arrivals and who is in house, checks guests in and
// out through the API, finds what the property can sell for a stay and books it for a
// guest, and watches their in-app notifications arrive. Plain DOM: every text the API or
// a user gave is set as text, never as markup.
import { createClient, type Session, type SupabaseClient } from "@supabase/supabase-js";
import {
  ApiProblem,
  ApiUnreachable,
  createFrontDeskApi,
  type Availability,
  type FrontDeskApi,
  type Guest,
  type InboxMessage,
  type MyTenant,
  type Property,
  type RateQuote,
  type Reservation,
  type Restriction,
  type RoomTypeOffer,
  type StaySearch,
  type Unit,
} from "./api.ts";
import { loadConfig } from "./config.ts";
import { dateIn, nextDate } from "./dates.ts";

// How often the inbox is asked for news: the worker delivers a check-in's alert within
// seconds of its run, and a front desk can wait that long.
const INBOX_POLL_MS = 3_000;

function element<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return found;
}

const view = {
  loading: element("loading", HTMLParagraphElement),
  error: element("error", HTMLParagraphElement),
  notice: element("notice", HTMLParagraphElement),
  account: element("account", HTMLDivElement),
  signedInAs: element("signed-in-as", HTMLSpanElement),
  signOut: element("sign-out", HTMLButtonElement),
  signIn: element("sign-in", HTMLElement),
  signInForm: element("sign-in-form", HTMLFormElement),
  email: element("email", HTMLInputElement),
  password: element("password", HTMLInputElement),
  desk: element("desk", HTMLElement),
  tenant: element("tenant", HTMLSelectElement),
  property: element("property", HTMLSelectElement),
  refresh: element("refresh", HTMLButtonElement),
  noTenant: element("no-tenant", HTMLParagraphElement),
  noTenantEmail: element("no-tenant-email", HTMLElement),
  noProperty: element("no-property", HTMLParagraphElement),
  lists: element("lists", HTMLDivElement),
  arrivalsDate: element("arrivals-date", HTMLTimeElement),
  arrivals: element("arrivals-list", HTMLUListElement),
  arrivalsEmpty: element("arrivals-empty", HTMLParagraphElement),
  inHouse: element("in-house-list", HTMLUListElement),
  inHouseEmpty: element("in-house-empty", HTMLParagraphElement),
  unreadCount: element("unread-count", HTMLSpanElement),
  markAllRead: element("mark-all-read", HTMLButtonElement),
  inbox: element("inbox-list", HTMLUListElement),
  inboxEmpty: element("inbox-empty", HTMLParagraphElement),
  search: element("search", HTMLElement),
  searchForm: element("search-form", HTMLFormElement),
  searchArrival: element("search-arrival", HTMLInputElement),
  searchDeparture: element("search-departure", HTMLInputElement),
  searchAdults: element("search-adults", HTMLInputElement),
  searchChildren: element("search-children", HTMLInputElement),
  searchButton: element("search-button", HTMLButtonElement),
  offers: element("offers", HTMLDivElement),
  offersStay: element("offers-stay", HTMLParagraphElement),
  bookGuest: element("book-guest", HTMLSelectElement),
  noGuests: element("no-guests", HTMLParagraphElement),
  offersList: element("offers-list", HTMLUListElement),
  offersEmpty: element("offers-empty", HTMLParagraphElement),
};

function say(target: HTMLElement, text: string | null): void {
  target.textContent = text ?? "";
  target.hidden = text === null;
}

function messageOf(error: unknown): string {
  if (error instanceof ApiProblem || error instanceof ApiUnreachable) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

function showError(error: unknown): void {
  say(view.notice, null);
  say(view.error, messageOf(error));
}

function showNotice(text: string): void {
  say(view.error, null);
  say(view.notice, text);
}

// "1 night", "3 nights".
function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

// An amount in minor units as "570.00 EUR": the currency's own fraction digits (EUR 2,
// JPY 0, KWD 3), in integers, so no amount is rounded on its way to the screen.
function money(minor: number, currency: string): string {
  const digits = new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  const scale = 10 ** digits;
  const size = Math.abs(minor);
  const fraction = digits === 0 ? "" : `.${String(size % scale).padStart(digits, "0")}`;
  return `${minor < 0 ? "-" : ""}${Math.floor(size / scale)}${fraction} ${currency}`;
}

// Why a plan does not sell the stay, as the desk says it.
function restrictionText(restriction: Restriction): string {
  const on = restriction.date === undefined ? "" : ` on ${restriction.date}`;
  switch (restriction.code) {
    case "inactive":
      return "not on sale";
    case "closed":
      return `closed${on}`;
    case "closed_to_arrival":
      return `closed to arrival${on}`;
    case "closed_to_departure":
      return `closed to departure${on}`;
    case "min_stay":
      return `a stay of at least ${count(restriction.minStay ?? 0, "night", "nights")} arriving${on}`;
    case "max_stay":
      return `a stay of at most ${count(restriction.maxStay ?? 0, "night", "nights")} arriving${on}`;
  }
}

function make<K extends keyof HTMLElementTagNameMap>(tag: K, className: string | null, text?: string): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  if (className !== null) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function fillSelect<T>(select: HTMLSelectElement, items: T[], value: (item: T) => string, label: (item: T) => string, keep: string | null) {
  select.replaceChildren(...items.map((item) => {
    const option = make("option", null, label(item));
    option.value = value(item);
    return option;
  }));
  const kept = items.find((item) => value(item) === keep);
  select.value = kept === undefined ? (items[0] === undefined ? "" : value(items[0])) : value(kept);
}

// What the desk shows now; null while nobody is signed in.
type Desk = {
  userId: string;
  tenants: MyTenant[];
  tenantId: string | null;
  properties: Property[];
  propertyId: string | null;
  units: Map<string, Unit>;
  guests: Map<string, Guest>;
  // The tenant's guests a stay may be booked for (the first page, by name).
  bookable: Guest[];
  // The search whose offers are shown, run again after a booking or a refresh.
  search: StaySearch | null;
};

function guestLabel(guest: Guest): string {
  return `${guest.firstName} ${guest.lastName}${guest.email === null ? "" : ` · ${guest.email}`}`;
}

class FrontDesk {
  private desk: Desk | null = null;
  private inboxTimer: ReturnType<typeof setInterval> | null = null;
  private inboxBusy = false;
  // Counts searches, so that only the latest one's answer is shown.
  private searches = 0;

  constructor(private readonly supabase: SupabaseClient, private readonly api: FrontDeskApi) {}

  start(): void {
    view.signInForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const submitter = event.submitter instanceof HTMLButtonElement ? event.submitter.value : "sign-in";
      void this.authenticate(submitter === "sign-up" ? "sign-up" : "sign-in");
    });
    view.signOut.addEventListener("click", () => void this.signOut());
    view.refresh.addEventListener("click", () => void this.guarded(() => this.loadTenants()));
    view.tenant.addEventListener("change", () => void this.guarded(() => this.chooseTenant(view.tenant.value)));
    view.property.addEventListener("change", () => void this.guarded(() => this.chooseProperty(view.property.value)));
    view.markAllRead.addEventListener("click", () => void this.guarded(() => this.markAllRead()));
    view.searchForm.addEventListener("submit", (event) => {
      event.preventDefault();
      view.searchButton.disabled = true;
      void this.guarded(() => this.search()).finally(() => (view.searchButton.disabled = false));
    });
    // supabase-js tells of every change of session: a sign-in here or in another tab, a
    // refresh, a sign-out. Its calls must not be awaited inside its own callback.
    this.supabase.auth.onAuthStateChange((_event, session) => {
      setTimeout(() => void this.guarded(() => this.sessionChanged(session)), 0);
    });
  }

  private async guarded(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      showError(error);
    }
  }

  private async authenticate(how: "sign-in" | "sign-up"): Promise<void> {
    const credentials = { email: view.email.value.trim(), password: view.password.value };
    say(view.error, null);
    if (how === "sign-up") {
      const { data, error } = await this.supabase.auth.signUp(credentials);
      if (error) return showError(`Sign-up failed: ${error.message}`);
      // With email confirmations on (a hosted project's default) there is no session yet.
      if (data.session === null) showNotice(`Check ${credentials.email} for the confirmation link, then sign in.`);
      else showNotice(`Welcome, ${credentials.email}.`);
    } else {
      const { error } = await this.supabase.auth.signInWithPassword(credentials);
      if (error) return showError(`Sign-in failed: ${error.message}`);
    }
    view.password.value = "";
  }

  private async signOut(): Promise<void> {
    // Ends the session at Auth, so the API refuses its token from the next request on.
    const { error } = await this.supabase.auth.signOut();
    if (error) return showError(`Sign-out failed: ${error.message}`);
    showNotice("Signed out.");
  }

  private async sessionChanged(session: Session | null): Promise<void> {
    view.loading.hidden = true;
    if (session === null) {
      this.stopInbox();
      this.desk = null;
      view.account.hidden = true;
      view.desk.hidden = true;
      view.signIn.hidden = false;
      return;
    }
    view.signedInAs.textContent = session.user.email ?? session.user.id;
    view.account.hidden = false;
    view.signIn.hidden = true;
    view.desk.hidden = false;
    // A refreshed token is the same user at the same desk.
    if (this.desk?.userId === session.user.id) return;
    this.desk = {
      userId: session.user.id, tenants: [], tenantId: null, properties: [], propertyId: null,
      units: new Map(), guests: new Map(), bookable: [], search: null,
    };
    view.noTenantEmail.textContent = session.user.email ?? "your email address";
    await this.loadTenants();
  }

  private async loadTenants(): Promise<void> {
    const desk = this.desk;
    if (desk === null) return;
    desk.tenants = await this.api.myTenants();
    fillSelect(view.tenant, desk.tenants, (tenant) => tenant.tenantId, (tenant) => `${tenant.name} (${tenant.role})`, desk.tenantId);
    view.noTenant.hidden = desk.tenants.length > 0;
    view.tenant.disabled = desk.tenants.length === 0;
    await this.chooseTenant(view.tenant.value || null);
  }

  private async chooseTenant(tenantId: string | null): Promise<void> {
    const desk = this.desk;
    if (desk === null) return;
    if (desk.tenantId !== tenantId) {
      desk.units.clear();
      desk.guests.clear();
      desk.bookable = [];
    }
    desk.tenantId = tenantId;
    if (tenantId === null) {
      this.stopInbox();
      desk.properties = [];
      fillSelect(view.property, [], () => "", () => "", null);
      view.property.disabled = true;
      view.noProperty.hidden = true;
      view.lists.hidden = true;
      view.search.hidden = true;
      desk.search = null;
      return;
    }
    const [properties, guests] = await Promise.all([this.api.properties(tenantId), this.api.guests(tenantId)]);
    if (this.desk !== desk || desk.tenantId !== tenantId) return;
    desk.properties = properties;
    desk.bookable = guests;
    for (const guest of guests) desk.guests.set(guest.id, guest);
    fillSelect(view.bookGuest, guests, (guest) => guest.id, (guest) => guestLabel(guest), view.bookGuest.value || null);
    view.bookGuest.disabled = guests.length === 0;
    view.noGuests.hidden = guests.length > 0;
    fillSelect(view.property, desk.properties, (property) => property.id, (property) => property.name, desk.propertyId);
    view.property.disabled = desk.properties.length === 0;
    view.noProperty.hidden = desk.properties.length > 0;
    this.startInbox();
    await this.chooseProperty(view.property.value || null);
  }

  private async chooseProperty(propertyId: string | null): Promise<void> {
    const desk = this.desk;
    if (desk === null) return;
    if (desk.propertyId !== propertyId) {
      // Another property: its own search, from its today (in its time zone) to the day after.
      desk.search = null;
      this.renderOffers(null);
      const property = desk.properties.find((candidate) => candidate.id === propertyId);
      if (property !== undefined) {
        const today = dateIn(property.timezone, new Date());
        view.searchArrival.value = today;
        view.searchDeparture.value = nextDate(today);
      }
    }
    desk.propertyId = propertyId;
    view.lists.hidden = propertyId === null;
    view.search.hidden = propertyId === null;
    await Promise.all([this.loadStays(), this.pollInbox(), desk.search === null ? Promise.resolve() : this.runSearch(desk.search)]);
  }

  // The arrivals and the in-house list of the chosen property, with their guests and units.
  private async loadStays(): Promise<void> {
    const desk = this.desk;
    const property = desk?.properties.find((candidate) => candidate.id === desk.propertyId);
    if (desk === null || desk.tenantId === null || property === undefined) return;
    const tenantId = desk.tenantId;
    const today = dateIn(property.timezone, new Date());
    const [arrivals, inHouse] = await Promise.all([
      this.api.arrivals(tenantId, property.id, today, nextDate(today)),
      this.api.inHouse(tenantId, property.id),
      desk.units.size === 0 ? this.loadUnits(desk, tenantId, property.id) : Promise.resolve(),
    ]);
    const stays = [...arrivals, ...inHouse];
    await Promise.all([...new Set(stays.map((stay) => stay.guestId))].filter((id) => !desk.guests.has(id)).map(async (id) => {
      desk.guests.set(id, await this.api.guest(tenantId, id));
    }));
    // The user may have moved on while these were read.
    if (this.desk !== desk || desk.tenantId !== tenantId || desk.propertyId !== property.id) return;
    view.arrivalsDate.textContent = today;
    view.arrivalsDate.dateTime = today;
    this.renderStays(view.arrivals, view.arrivalsEmpty, arrivals, today, "Check in", (stay) => this.checkIn(stay));
    this.renderStays(view.inHouse, view.inHouseEmpty, inHouse, today, "Check out", (stay) => this.checkOut(stay));
  }

  private async loadUnits(desk: Desk, tenantId: string, propertyId: string): Promise<void> {
    for (const unit of await this.api.units(tenantId, propertyId)) desk.units.set(unit.id, unit);
  }

  private renderStays(
    list: HTMLUListElement,
    empty: HTMLParagraphElement,
    stays: Reservation[],
    today: string,
    action: string,
    act: (stay: Reservation) => Promise<void>,
  ): void {
    const desk = this.desk;
    list.replaceChildren(...stays.map((stay) => {
      const guest = desk?.guests.get(stay.guestId);
      const unit = stay.unitId === null ? undefined : desk?.units.get(stay.unitId);
      const item = make("li", null);
      item.dataset.reservationId = stay.id;
      item.dataset.confirmationCode = stay.confirmationCode;
      const about = make("div", "stay");
      about.append(
        make("span", "guest", guest === undefined ? "Guest" : `${guest.firstName} ${guest.lastName}`),
        make("span", "details", `${unit?.name ?? "No unit yet"} · ${stay.confirmationCode}`),
        make("span", "details", `${stay.checkIn} → ${stay.checkOut}`),
      );
      if (stay.status === "confirmed" && stay.checkIn < today) about.append(make("span", "details late", `Expected since ${stay.checkIn}`));
      const button = make("button", null, action);
      button.type = "button";
      button.addEventListener("click", () => {
        button.disabled = true;
        void this.guarded(() => act(stay)).finally(() => (button.disabled = false));
      });
      item.append(about, button);
      return item;
    }));
    empty.hidden = stays.length > 0;
  }

  private guestName(stay: Reservation): string {
    const guest = this.desk?.guests.get(stay.guestId);
    return guest === undefined ? stay.confirmationCode : `${guest.firstName} ${guest.lastName}`;
  }

  private async checkIn(stay: Reservation): Promise<void> {
    const tenantId = this.desk?.tenantId;
    if (!tenantId) return;
    await this.api.checkIn(tenantId, stay.id);
    showNotice(`${this.guestName(stay)} is checked in.`);
    await this.loadStays();
  }

  private async checkOut(stay: Reservation): Promise<void> {
    const tenantId = this.desk?.tenantId;
    if (!tenantId) return;
    await this.api.checkOut(tenantId, stay.id);
    showNotice(`${this.guestName(stay)} is checked out.`);
    await this.loadStays();
  }

  // The receptionist's search: the form's dates and party at the chosen property.
  private async search(): Promise<void> {
    const propertyId = this.desk?.propertyId;
    if (!propertyId) return;
    say(view.error, null);
    await this.runSearch({
      propertyId,
      arrival: view.searchArrival.value,
      departure: view.searchDeparture.value,
      adults: view.searchAdults.valueAsNumber,
      children: view.searchChildren.valueAsNumber,
    });
  }

  private async runSearch(search: StaySearch): Promise<void> {
    const desk = this.desk;
    const tenantId = desk?.tenantId;
    if (!desk || !tenantId) return;
    const asked = ++this.searches;
    const found = await this.api.availability(tenantId, search);
    // A later search, or another tenant or property, has taken the screen meanwhile.
    if (asked !== this.searches || this.desk !== desk || desk.tenantId !== tenantId || desk.propertyId !== search.propertyId) return;
    desk.search = search;
    this.renderOffers({ search, found });
  }

  private renderOffers(shown: { search: StaySearch; found: Availability } | null): void {
    view.offers.hidden = shown === null;
    if (shown === null) {
      view.offersList.replaceChildren();
      return;
    }
    const { search, found } = shown;
    view.offersStay.textContent = `${found.arrival} → ${found.departure} · ${count(found.nights, "night", "nights")} · ` +
      `${count(found.adults, "adult", "adults")}, ${count(found.children, "child", "children")}`;
    view.offersList.replaceChildren(...found.roomTypes.map((offer) => this.offerItem(search, offer)));
    view.offersEmpty.hidden = found.roomTypes.length > 0;
  }

  // A room type: the rooms left, and each plan that sells it with its total and a Book
  // button, or what stops it.
  private offerItem(search: StaySearch, offer: RoomTypeOffer): HTMLLIElement {
    const item = make("li", null);
    item.dataset.roomTypeId = offer.roomTypeId;
    const about = make("div", "room-type");
    about.append(
      make("span", "guest", `${offer.name} (${offer.code})`),
      make("span", "rooms-left", offer.available === 0 ? "No room left" : `${count(offer.available, "room", "rooms")} left`),
    );
    if (!offer.fitsParty) about.append(make("span", "details not-bookable", `Too many guests for it (at most ${offer.maxOccupancy})`));
    const plans = make("ul", "plans");
    plans.append(...offer.ratePlans.map((quote) => {
      const line = make("li", null);
      line.dataset.ratePlanId = quote.ratePlanId;
      line.dataset.bookable = String(quote.bookable);
      line.append(make("span", "plan", `${quote.name} (${quote.code})`));
      if (!quote.bookable) {
        line.append(make("span", "restrictions not-bookable", quote.restrictions.map(restrictionText).join("; ")));
        return line;
      }
      line.append(
        make("span", "total", money(quote.total, quote.currency)),
        make("span", "details", quote.nights.map((night) => `${night.date} ${money(night.amount, quote.currency)}`).join(" · ")),
      );
      const button = make("button", null, "Book");
      button.type = "button";
      button.disabled = offer.available === 0 || !offer.fitsParty || this.desk?.bookable.length === 0;
      button.addEventListener("click", () => {
        button.disabled = true;
        void this.guarded(() => this.book(search, offer, quote)).finally(() => (button.disabled = false));
      });
      line.append(button);
      return line;
    }));
    if (offer.ratePlans.length === 0) plans.append(make("li", "details", "No rate plan sells it."));
    item.append(about, plans);
    return item;
  }

  // Books the offer for the guest chosen, at the plan's calendar price. Booked or refused,
  // the search runs again: the rooms left are what the booking (or another desk) left.
  private async book(search: StaySearch, offer: RoomTypeOffer, quote: RateQuote): Promise<void> {
    const desk = this.desk;
    const tenantId = desk?.tenantId;
    if (!desk || !tenantId) return;
    const guest = desk.bookable.find((candidate) => candidate.id === view.bookGuest.value);
    if (guest === undefined) return showError("Choose the guest to book for.");
    let booked: Reservation;
    try {
      booked = await this.api.book(tenantId, { ...search, roomTypeId: offer.roomTypeId, ratePlanId: quote.ratePlanId, guestId: guest.id });
    } catch (error) {
      showError(error);
      await this.runSearch(search);
      return;
    }
    showNotice(
      `Booked ${booked.confirmationCode} for ${guest.firstName} ${guest.lastName}: ${offer.name}, ${quote.name}, ` +
        `${booked.checkIn} → ${booked.checkOut}, ${money(booked.totalAmount, booked.currency)}.`,
    );
    await Promise.all([this.runSearch(search), this.loadStays()]);
  }

  private startInbox(): void {
    if (this.inboxTimer === null) this.inboxTimer = setInterval(() => void this.guarded(() => this.pollInbox()), INBOX_POLL_MS);
  }

  private stopInbox(): void {
    if (this.inboxTimer !== null) clearInterval(this.inboxTimer);
    this.inboxTimer = null;
    view.inbox.replaceChildren();
  }

  private async pollInbox(): Promise<void> {
    const tenantId = this.desk?.tenantId;
    if (!tenantId || this.inboxBusy) return;
    this.inboxBusy = true;
    try {
      const { messages, unread } = await this.api.inbox(tenantId);
      if (this.desk?.tenantId !== tenantId) return;
      this.renderInbox(messages, unread);
    } finally {
      this.inboxBusy = false;
    }
  }

  private renderInbox(messages: InboxMessage[], unread: number): void {
    view.unreadCount.textContent = String(unread);
    view.unreadCount.classList.toggle("none", unread === 0);
    view.markAllRead.disabled = unread === 0;
    view.inbox.replaceChildren(...messages.map((message) => {
      const item = make("li", message.readAt === null ? "unread" : null);
      item.dataset.messageId = message.id;
      item.dataset.templateKey = message.templateKey;
      const at = make("time", null, new Date(message.createdAt).toLocaleString());
      at.dateTime = message.createdAt;
      item.append(make("span", "title", message.title), make("span", "body", message.body), at);
      return item;
    }));
    view.inboxEmpty.hidden = messages.length > 0;
  }

  private async markAllRead(): Promise<void> {
    const tenantId = this.desk?.tenantId;
    if (!tenantId) return;
    await this.api.markAllRead(tenantId);
    await this.pollInbox();
  }
}

async function main(): Promise<void> {
  const config = await loadConfig();
  const supabase = createClient(config.supabaseUrl, config.anonKey);
  const accessToken = async () => (await supabase.auth.getSession()).data.session?.access_token ?? null;
  new FrontDesk(supabase, createFrontDeskApi(config.supabaseUrl, accessToken)).start();
}

main().catch((error) => {
  view.loading.hidden = true;
  showError(`The front desk could not start: ${messageOf(error)}`);
});
