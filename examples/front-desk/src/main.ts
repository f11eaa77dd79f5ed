// The front desk: a receptionist signs in (supabase-js against the project's Auth), picks a
// tenant and a property, sees today's arrivals and who is in house, checks guests in and
// out through the API, and watches their in-app notifications arrive. Plain DOM: every
// text the API or a user gave is set as text, never as markup.
import { createClient, type Session, type SupabaseClient } from "@supabase/supabase-js";
import {
  ApiProblem,
  ApiUnreachable,
  createFrontDeskApi,
  type FrontDeskApi,
  type Guest,
  type InboxMessage,
  type MyTenant,
  type Property,
  type Reservation,
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
};

class FrontDesk {
  private desk: Desk | null = null;
  private inboxTimer: ReturnType<typeof setInterval> | null = null;
  private inboxBusy = false;

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
      units: new Map(), guests: new Map(),
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
    }
    desk.tenantId = tenantId;
    if (tenantId === null) {
      this.stopInbox();
      desk.properties = [];
      fillSelect(view.property, [], () => "", () => "", null);
      view.property.disabled = true;
      view.noProperty.hidden = true;
      view.lists.hidden = true;
      return;
    }
    desk.properties = await this.api.properties(tenantId);
    fillSelect(view.property, desk.properties, (property) => property.id, (property) => property.name, desk.propertyId);
    view.property.disabled = desk.properties.length === 0;
    view.noProperty.hidden = desk.properties.length > 0;
    this.startInbox();
    await this.chooseProperty(view.property.value || null);
  }

  private async chooseProperty(propertyId: string | null): Promise<void> {
    const desk = this.desk;
    if (desk === null) return;
    desk.propertyId = propertyId;
    view.lists.hidden = propertyId === null;
    await Promise.all([this.loadStays(), this.pollInbox()]);
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
