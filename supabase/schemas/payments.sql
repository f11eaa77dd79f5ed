-- Money received against a reservation, and links that ask a guest to pay.
-- A reservation's amount_paid (and so its balance) follows its payments.
create table public.payment_links (
  tenant_id uuid not null default private.request_tenant_id()
    constraint payment_links_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  reservation_id uuid not null,
  -- At most 10^12 minor units, as every amount (reservations.sql says why).
  amount bigint not null constraint payment_links_amount_check check (amount > 0)
    constraint payment_links_amount_within_maximum check (amount <= 1000000000000),
  -- Defaults to the reservation's currency, and must equal it.
  currency text not null,
  -- Always assigned by the database: 32 url-safe characters, 192 random bits.
  token text not null default translate(encode(extensions.gen_random_bytes(24), 'base64'), '+/', '-_'),
  url text constraint payment_links_url_check check (url ~ '^https?://[^\s]+$'),
  description text constraint payment_links_description_check check (length(description) <= 500),
  status text not null default 'active'
    constraint payment_links_status_check check (status in ('active', 'paid', 'expired', 'cancelled')),
  expires_at timestamptz not null default now() + interval '7 days',
  paid_at timestamptz,
  cancelled_at timestamptz,
  created_by uuid default auth.uid()
    constraint payment_links_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint payment_links_pkey primary key (tenant_id, id),
  constraint payment_links_tenant_id_reservation_id_id_key unique (tenant_id, reservation_id, id),
  constraint payment_links_expire_after_creation check (expires_at > created_at),
  constraint payment_links_tenant_id_reservation_id_currency_fkey foreign key (tenant_id, reservation_id, currency)
    references public.reservations (tenant_id, id, currency) on delete cascade
);
-- The payment page resolves a link from its token alone, before any tenant is
-- known, so this is the one index that does not lead with tenant_id.
create unique index payment_links_token_key on public.payment_links (token);

create table public.payments (
  tenant_id uuid not null default private.request_tenant_id()
    constraint payments_tenant_id_fkey references public.tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  reservation_id uuid not null,
  payment_link_id uuid,
  -- At most 10^12 minor units, as every amount (reservations.sql says why).
  amount bigint not null constraint payments_amount_check check (amount > 0)
    constraint payments_amount_within_maximum check (amount <= 1000000000000),
  -- Defaults to the reservation's currency, and must equal it.
  currency text not null,
  method text not null default 'card'
    constraint payments_method_check check (method in ('card', 'cash', 'bank_transfer', 'wallet', 'other')),
  source text not null default 'manual'
    constraint payments_source_check check (source in ('manual', 'payment_link', 'external')),
  -- The payer system's id for the payment: a retried call finds the first one.
  external_reference text
    constraint payments_external_reference_check check (length(external_reference) between 1 and 200),
  received_at timestamptz not null default now(),
  notes text constraint payments_notes_check check (length(notes) <= 1000),
  created_by uuid default auth.uid() constraint payments_created_by_fkey references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint payments_pkey primary key (tenant_id, id),
  constraint payments_tenant_id_external_reference_key unique (tenant_id, external_reference),
  constraint payments_link_exactly_when_source_is_payment_link
    check ((source = 'payment_link') = (payment_link_id is not null)),
  constraint payments_external_source_has_external_reference
    check (source <> 'external' or external_reference is not null),
  constraint payments_tenant_id_reservation_id_currency_fkey
    foreign key (tenant_id, reservation_id, currency) references public.reservations (tenant_id, id, currency),
  constraint payments_tenant_id_reservation_id_payment_link_id_fkey
    foreign key (tenant_id, reservation_id, payment_link_id)
    references public.payment_links (tenant_id, reservation_id, id)
);
create index payments_tenant_reservation_idx on public.payments (tenant_id, reservation_id);
create index payments_tenant_payment_link_idx on public.payments (tenant_id, payment_link_id)
  where payment_link_id is not null;

-- A payment link moves from active to paid, expired or cancelled, and a finished
-- one refuses every update, a repeated cancel included: the API's actions then
-- answer 409 naming the status rather than succeeding again with a new updated_at.
create or replace function private.payment_link_before_write()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    if new.status <> 'active' then
      raise exception 'a payment link starts active' using errcode = '23514';
    end if;
    new.token := translate(encode(extensions.gen_random_bytes(24), 'base64'), '+/', '-_');
    new.paid_at := null;
    new.cancelled_at := null;
    if new.currency is null then
      select r.currency into new.currency from public.reservations r
      where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
    end if;
    if new.url is null then
      select rtrim(t.payment_page_base_url, '/') || '/' || new.token into new.url
      from public.tenants t where t.id = new.tenant_id;
    end if;
    return new;
  end if;

  if old.status <> 'active' then
    raise exception 'a % payment link can no longer change', old.status
      using errcode = 'PT409', constraint = 'payment_links_final_fixed',
            detail = jsonb_build_object('currentStatus', old.status)::text, hint = format('%s is final', old.status);
  end if;
  if (new.reservation_id, new.amount, new.currency, new.token) is distinct from
     (old.reservation_id, old.amount, old.currency, old.token) then
    raise exception 'a payment link''s reservation, amount, currency and token cannot change'
      using errcode = 'PT409', constraint = 'payment_links_fields_fixed', hint = 'Cancel it and create another.';
  end if;
  -- From active, every other status is a step forward.
  if new.status is distinct from old.status then
    case new.status
      when 'paid' then new.paid_at := now();
      when 'cancelled' then new.cancelled_at := now();
      else null;
    end case;
  end if;
  return new;
end
$$;

create or replace function private.payment_before_insert()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  link public.payment_links;
begin
  if new.currency is null then
    select r.currency into new.currency from public.reservations r
    where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
  end if;
  if new.payment_link_id is not null then
    select * into link from public.payment_links l
    where l.tenant_id = new.tenant_id and l.id = new.payment_link_id
    for update;
    if found then
      if link.status <> 'active' or link.expires_at <= now() then
        raise exception 'payment link % is %', link.id,
          case when link.status = 'active' then 'expired' else link.status end
          using errcode = 'PT409', constraint = 'payments_link_must_be_active',
                detail = jsonb_build_object('currentStatus',
                                            case when link.status = 'active' then 'expired' else link.status end)::text;
      end if;
      if new.amount <> link.amount then
        raise exception 'payment link % asks for %, not %', link.id, link.amount, new.amount using errcode = '23514';
      end if;
    end if;
  end if;
  return new;
end
$$;

-- Runs as owner: recording a payment must update the reservation's totals and
-- settle its link whatever the caller may write to those tables.
create or replace function private.apply_payment()
returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    update public.reservations r set amount_paid = r.amount_paid + new.amount
    where r.tenant_id = new.tenant_id and r.id = new.reservation_id;
    if new.payment_link_id is not null then
      update public.payment_links l set status = 'paid'
      where l.tenant_id = new.tenant_id and l.id = new.payment_link_id;
    end if;
    return new;
  end if;
  update public.reservations r set amount_paid = r.amount_paid - old.amount
  where r.tenant_id = old.tenant_id and r.id = old.reservation_id;
  return old;
end
$$;

-- A payment is a record of money received: it is voided (deleted by a manager),
-- never edited, apart from its notes.
create or replace function private.payment_before_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if (new.reservation_id, new.payment_link_id, new.amount, new.currency, new.method, new.source,
      new.external_reference, new.received_at)
     is distinct from
     (old.reservation_id, old.payment_link_id, old.amount, old.currency, old.method, old.source,
      old.external_reference, old.received_at) then
    raise exception 'a payment cannot be edited; void it and record another'
      using errcode = 'PT409', constraint = 'payments_fields_fixed';
  end if;
  return new;
end
$$;

create trigger payment_link_before_write before insert or update on public.payment_links
  for each row execute function private.payment_link_before_write();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.payment_links
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.payment_links
  for each row execute function private.touch_updated_at();

create trigger payment_before_insert before insert on public.payments
  for each row execute function private.payment_before_insert();
create trigger payment_before_update before update on public.payments
  for each row execute function private.payment_before_update();
create trigger apply_payment after insert or delete on public.payments
  for each row execute function private.apply_payment();
create trigger forbid_tenant_change before update of tenant_id, created_at, created_by on public.payments
  for each row execute function private.forbid_tenant_change();
create trigger touch_updated_at before update on public.payments
  for each row execute function private.touch_updated_at();

alter table public.payment_links enable row level security;
alter table public.payments enable row level security;
revoke all on public.payment_links, public.payments from anon;

create policy "members read payment links" on public.payment_links
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "members create payment links" on public.payment_links
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_member())
    and created_by is not distinct from (select auth.uid())
  );
create policy "members update payment links" on public.payment_links
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers delete payment links" on public.payment_links
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));

create policy "members read payments" on public.payments
  for select to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "members record payments" on public.payments
  for insert to authenticated
  with check (
    tenant_id = (select private.request_tenant_id()) and (select private.request_is_member())
    and created_by is not distinct from (select auth.uid())
  );
create policy "members annotate payments" on public.payments
  for update to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()))
  with check (tenant_id = (select private.request_tenant_id()) and (select private.request_is_member()));
create policy "managers void payments" on public.payments
  for delete to authenticated
  using (tenant_id = (select private.request_tenant_id()) and (select private.request_is_manager()));
