-- What happened to each message after its provider accepted it. `sent` means the provider
-- took the message (SendGrid's 202, the SMS provider's 201); what became of it afterwards
-- the providers report later, to the api function's webhooks (POST /v1/webhooks/sendgrid,
-- POST /v1/webhooks/sms), which verify each report's signature and record it here through
-- one function, private.record_delivery_events, running as the role provider_webhook
-- (baseline.sql). Recorded are:
-- - every event, once (public.notification_events): a provider retries a batch and may
--   send the same event again, and events arrive in any order;
-- - the notification's delivery state beside its status (public.notifications'
--   delivery_* columns, notifications.sql), derived from all its events, so the order they
--   arrived in does not matter;
-- - a guest's email address marked undeliverable when the provider says mail to it cannot
--   arrive (a hard bounce, a drop for an invalid or bouncing address, a spam report):
--   later email to it is skipped until the address changes or a manager clears the mark
--   (public.guests' email_undeliverable_* columns, guests.sql).
-- docs/notifications-delivery.md describes the whole; docs/security.md the webhooks' role.

-- ---------------------------------------------------------------- the events

-- Every report a provider made of a message, once: SendGrid's events (processed, deferred,
-- delivered, bounce, dropped, spamreport, open, click, ...) and the SMS provider's status
-- callbacks (queued, sent, delivered, undelivered, failed, ...), under the provider's own
-- name, with the delivery state it reports (null for one that reports none: processed,
-- open, click, sent). A provider's event id is unique in the tenant: SendGrid's sg_event_id,
-- and for SMS the message and the status it reports (the provider sends each status once,
-- and a second callback with the same one is the same report). Events are evidence: never
-- changed, gone only with their notification.
create table public.notification_events (
  tenant_id uuid not null
    constraint notification_events_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  notification_id uuid not null,
  provider text not null constraint notification_events_provider_check check (provider in ('sendgrid', 'sms')),
  provider_event_id text not null
    constraint notification_events_provider_event_id_check check (length(provider_event_id) between 1 and 255),
  event text not null constraint notification_events_event_check check (event ~ '^[a-z][a-z_]{0,39}$'),
  delivery_state text
    constraint notification_events_delivery_state_check
      check (delivery_state in ('delivered', 'deferred', 'bounced', 'dropped', 'spam_report', 'undelivered', 'failed')),
  -- When the provider says it happened (SendGrid's timestamp); for SMS, which reports no
  -- time, when the callback arrived.
  occurred_at timestamptz not null,
  reason text constraint notification_events_reason_check check (length(reason) <= 2000),
  code text constraint notification_events_code_check check (length(code) <= 100),
  -- When it was recorded.
  created_at timestamptz not null default now(),
  constraint notification_events_pkey primary key (tenant_id, id),
  constraint notification_events_tenant_id_notification_id_fkey foreign key (tenant_id, notification_id)
    references public.notifications (tenant_id, id) on delete cascade,
  constraint notification_events_tenant_id_provider_event_key unique (tenant_id, provider, provider_event_id)
);

-- A notification's events, newest first; also the foreign key's index.
create index notification_events_tenant_notification_idx
  on public.notification_events (tenant_id, notification_id, occurred_at desc, created_at desc);

create or replace function private.forbid_notification_event_change()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception 'a notification event is what the provider reported and never changes' using errcode = '42501';
end
$$;

create trigger forbid_notification_event_change before update on public.notification_events
  for each row execute function private.forbid_notification_event_change();

alter table public.notification_events enable row level security;
revoke all on public.notification_events from anon, authenticated;
grant select on public.notification_events to authenticated;

-- Members read their tenant's events; only private.record_delivery_events writes them.
create policy "members read notification events" on public.notification_events
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));

-- ---------------------------------------------------------------- the guest's address

-- Who may touch a guest's undeliverable mark. A request's roles never set one: only the
-- provider's report, through private.record_delivery_events (running as the table's
-- owner), does. Clearing is for the tenant's managers; staff keep the guest's record but
-- not this judgement. The time of the last clearing is stamped here and never written
-- directly. An address that changes (beyond letter case) loses its mark.
create or replace function private.guard_email_undeliverable()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  request_role boolean := current_user::text in ('anon', 'authenticated', 'api_integration', 'background_worker', 'provider_webhook');
begin
  if tg_op = 'INSERT' then
    if request_role and (new.email_undeliverable_at is not null or new.email_undeliverable_reason is not null
                         or new.email_undeliverable_cleared_at is not null) then
      raise exception 'an email address is marked undeliverable only by its provider''s report' using errcode = '42501';
    end if;
    return new;
  end if;
  if new.email_undeliverable_cleared_at is distinct from old.email_undeliverable_cleared_at then
    raise exception 'email_undeliverable_cleared_at is stamped when the mark is cleared and cannot be set' using errcode = '42501';
  end if;
  if (new.email_undeliverable_at, new.email_undeliverable_reason)
     is distinct from (old.email_undeliverable_at, old.email_undeliverable_reason) then
    if new.email_undeliverable_at is not null or new.email_undeliverable_reason is not null then
      if request_role then
        raise exception 'an email address is marked undeliverable only by its provider''s report' using errcode = '42501';
      end if;
    else
      if request_role and not private.request_is_manager() then
        raise exception 'only the tenant''s owners and admins clear an undeliverable mark' using errcode = '42501';
      end if;
      new.email_undeliverable_cleared_at := now();
    end if;
  end if;
  if lower(new.email) is distinct from lower(old.email) and new.email_undeliverable_at is not null then
    new.email_undeliverable_at := null;
    new.email_undeliverable_reason := null;
    new.email_undeliverable_cleared_at := now();
  end if;
  return new;
end
$$;

create trigger guard_email_undeliverable
  before insert or update of email, email_undeliverable_at, email_undeliverable_reason, email_undeliverable_cleared_at
  on public.guests
  for each row execute function private.guard_email_undeliverable();

-- ---------------------------------------------------------------- recording

-- A notification's delivery state from all its events, whatever order they came in: a
-- final report (delivered, bounced, dropped, spam_report, undelivered, failed) outranks a
-- deferral, which only says the provider is still trying; among final reports the latest
-- wins (a bounce can follow a delivery), and at the same second the graver one (a spam
-- report, then a bounce, undelivered or failed, a drop, a delivery last). With only
-- deferrals, the latest. Unchanged columns are not written.
create or replace function private.settle_delivery_state(tenant uuid, notification uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  latest record;
begin
  select e.delivery_state, e.occurred_at, e.reason, e.code into latest
  from public.notification_events e
  where e.tenant_id = tenant and e.notification_id = notification and e.delivery_state is not null
  order by e.delivery_state <> 'deferred' desc, e.occurred_at desc,
           array_position(array['delivered', 'dropped', 'failed', 'undelivered', 'bounced', 'spam_report'], e.delivery_state) desc nulls last,
           e.created_at desc, e.id desc
  limit 1;
  if latest.delivery_state is null then
    return;
  end if;
  update public.notifications n
  set delivery_state = latest.delivery_state, delivery_state_at = latest.occurred_at,
      delivery_reason = latest.reason, delivery_code = latest.code
  where n.tenant_id = tenant and n.id = notification
    and (n.delivery_state, n.delivery_state_at, n.delivery_reason, n.delivery_code)
        is distinct from (latest.delivery_state, latest.occurred_at, latest.reason, latest.code);
end
$$;
revoke all on function private.settle_delivery_state(uuid, uuid) from public;

-- Records a batch of one provider's reports. The api function has verified the batch's
-- signature and put each event in one shape (src/webhooks): the tenant and notification it
-- names (SendGrid's custom args, the SMS callback's URL), the provider's message id, its
-- own event id, the event's name, the delivery state it reports, when it happened, the
-- provider's reason and code, and whether it says the address cannot receive mail.
--
-- Runs as its owner: the caller (provider_webhook) has no tenant and no privilege on any
-- table, so row-level security, which scopes rows to a request's tenant, has nothing to
-- scope here. What stands in for it: the notification is looked up by the tenant and id
-- the signed report names, and only when the provider's message id the report carries is
-- the one the worker stored for that notification (on its channel) is anything written,
-- always in that notification's tenant (the events' composite foreign key holds them to
-- it). A report naming a pending notification whose send is under way (marked, and no
-- message id recorded) is the provider's word that it took the message, which the worker
-- may never have heard (its answer lost, the run ended): the report is recorded and the
-- notification takes the provider's message id; the worker marks it sent when its job
-- comes back, and gives it the state its reports say. A pending notification takes no
-- delivery state: that waits for it to be sent. Each event's outcome:
--   recorded   stored; the notification's state settled again (once it is sent); the
--              guest marked if it says so
--   duplicate  this provider's event id is already stored: nothing changes
--   unmatched  no such notification, another channel's, or another message id than the one
--              stored (a copy of the message the worker does not track): nothing is stored,
--              and no retry would change that
--   early      the notification is still pending with no message id and no send under
--              way: the worker has not recorded the provider's acceptance yet; the
--              provider should send it again
-- Events of one notification are taken under a transaction-level advisory lock on it,
-- notifications in a fixed order, so concurrent batches settle each state in turn and
-- never deadlock on one another.
create or replace function private.record_delivery_events(provider text, events jsonb)
returns table (outcome text, total bigint)
language plpgsql security definer
set search_path = ''
as $$
declare
  channel text := case record_delivery_events.provider when 'sendgrid' then 'email' when 'sms' then 'sms' end;
  e record;
  n record;
  inserted uuid;
  counts jsonb := '{"recorded": 0, "duplicate": 0, "unmatched": 0, "early": 0}';
  verdict text;
begin
  if channel is null then
    raise exception 'unknown provider %', record_delivery_events.provider using errcode = '22023';
  end if;
  if pg_catalog.jsonb_typeof(record_delivery_events.events) is distinct from 'array' then
    raise exception 'events must be a JSON array' using errcode = '22023';
  end if;
  for e in
    select x.* from pg_catalog.jsonb_to_recordset(record_delivery_events.events) as x(
      tenant_id uuid, notification_id uuid, provider_message_id text, provider_event_id text, event text,
      delivery_state text, occurred_at timestamptz, reason text, code text, undeliverable boolean)
    order by x.tenant_id, x.notification_id, x.occurred_at, x.provider_event_id
  loop
    inserted := null;
    if e.tenant_id is null or e.notification_id is null then
      verdict := 'unmatched';
    else
      perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(e.tenant_id::text || '/' || e.notification_id::text, 0));
      select t.tenant_id, t.id, t.channel, t.status, t.provider_message_id, t.recipient_type, t.recipient_id, t.recipient_address,
             t.send_started_at
        into n
      from public.notifications t
      where t.tenant_id = e.tenant_id and t.id = e.notification_id;
      if not found or n.channel <> channel then
        verdict := 'unmatched';
      elsif n.provider_message_id is null and n.status = 'pending' and n.send_started_at is not null
            and e.provider_message_id is not null then
        update public.notifications t set provider_message_id = e.provider_message_id
        where t.tenant_id = n.tenant_id and t.id = n.id;
        n.provider_message_id := e.provider_message_id;
        verdict := 'match';
      elsif n.provider_message_id is null then
        verdict := case when n.status = 'pending' then 'early' else 'unmatched' end;
      elsif n.provider_message_id is distinct from e.provider_message_id then
        verdict := 'unmatched';
      else
        verdict := 'match';
      end if;
      if verdict = 'match' then
        insert into public.notification_events
          (tenant_id, notification_id, provider, provider_event_id, event, delivery_state, occurred_at, reason, code)
        values (n.tenant_id, n.id, record_delivery_events.provider, e.provider_event_id, e.event, e.delivery_state,
                e.occurred_at, e.reason, e.code)
        on conflict on constraint notification_events_tenant_id_provider_event_key do nothing
        returning id into inserted;
        verdict := case when inserted is null then 'duplicate' else 'recorded' end;
      end if;
    end if;
    if verdict = 'recorded' then
      if e.delivery_state is not null and n.status = 'sent' then
        perform private.settle_delivery_state(n.tenant_id, n.id);
      end if;
      -- The address the report is about is the one the mail went to; a guest who has
      -- changed it since keeps the new one unmarked.
      if e.undeliverable and channel = 'email' and n.recipient_type = 'guest' then
        update public.guests g
        set email_undeliverable_at = e.occurred_at,
            email_undeliverable_reason = left(
              case e.delivery_state when 'bounced' then 'the mail bounced'
                                    when 'dropped' then 'the provider dropped the mail'
                                    when 'spam_report' then 'the guest reported the mail as spam'
                                    else 'the provider reported the address undeliverable' end
              || coalesce(': ' || nullif(e.reason, ''), ''), 2000)
        where g.tenant_id = n.tenant_id and g.id = n.recipient_id
          and lower(g.email) = lower(n.recipient_address)
          and g.email_undeliverable_at is null
          and e.occurred_at > coalesce(g.email_undeliverable_cleared_at, '-infinity'::timestamptz);
      end if;
    end if;
    counts := pg_catalog.jsonb_set(counts, array[verdict], pg_catalog.to_jsonb((counts ->> verdict)::bigint + 1));
  end loop;
  return query select key, value::bigint from pg_catalog.jsonb_each_text(counts) order by key;
end
$$;
revoke all on function private.record_delivery_events(text, jsonb) from public;
grant execute on function private.record_delivery_events(text, jsonb) to provider_webhook;
