-- The private helpers written in SQL, rewritten in PL/pgSQL with the same signature,
-- volatility, owner rights and search_path. A SQL function with a SET clause (or
-- security definer) is never inlined, and Postgres parses and plans its body again
-- in every statement that calls it: the request scope's role check, every policy's
-- tenant check and the notification trigger each paid that on every request. perf on
-- a backend running check-ins put half its samples under fmgr_security_definer and a
-- third under fmgr_sql. PL/pgSQL keeps its plans for the life of the connection.

create or replace function private.request_tenant_id()
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.tenant_id', true), '')::uuid;
end
$$;

create or replace function private.request_property_id()
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.property_id', true), '')::uuid;
end
$$;

create or replace function private.request_api_key_id()
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return nullif(pg_catalog.current_setting('app.api_key_id', true), '')::uuid;
end
$$;

-- The tenant and the user are read once, before the lookup: as calls inside its WHERE
-- they would be evaluated for every row a scan of tenant_memberships visits.
create or replace function private.request_member_role()
returns public.tenant_role
language plpgsql stable security definer
set search_path = ''
as $$
declare
  tenant uuid := private.request_tenant_id();
  member uuid := auth.uid();
begin
  return (select m.role from public.tenant_memberships m where m.tenant_id = tenant and m.user_id = member);
end
$$;

create or replace function private.request_is_member()
returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return private.request_member_role() is not null;
end
$$;

create or replace function private.request_is_manager()
returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return coalesce(private.request_member_role() in ('owner', 'admin'), false);
end
$$;

create or replace function private.request_is_owner()
returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return coalesce(private.request_member_role() = 'owner', false);
end
$$;

create or replace function private.send_notification_job(notification_id uuid, tenant uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pgmq.send('notifications', jsonb_build_object('notificationId', notification_id, 'tenantId', tenant));
end
$$;

create or replace function private.is_iso_currency(code text)
returns boolean
language plpgsql immutable
set search_path = ''
as $$
begin
  return code = any ('{AED,AFN,ALL,AMD,ANG,AOA,ARS,AUD,AWG,AZN,BAM,BBD,BDT,BGN,BHD,BIF,BMD,BND,BOB,BRL,
    BSD,BTN,BWP,BYN,BZD,CAD,CDF,CHF,CLP,CNY,COP,CRC,CUP,CVE,CZK,DJF,DKK,DOP,DZD,EGP,ERN,ETB,EUR,FJD,FKP,
    GBP,GEL,GHS,GIP,GMD,GNF,GTQ,GYD,HKD,HNL,HTG,HUF,IDR,ILS,INR,IQD,IRR,ISK,JMD,JOD,JPY,KES,KGS,KHR,KMF,
    KPW,KRW,KWD,KYD,KZT,LAK,LBP,LKR,LRD,LSL,LYD,MAD,MDL,MGA,MKD,MMK,MNT,MOP,MRU,MUR,MVR,MWK,MXN,MYR,MZN,
    NAD,NGN,NIO,NOK,NPR,NZD,OMR,PAB,PEN,PGK,PHP,PKR,PLN,PYG,QAR,RON,RSD,RUB,RWF,SAR,SBD,SCR,SDG,SEK,SGD,
    SHP,SLE,SOS,SRD,SSP,STN,SVC,SYP,SZL,THB,TJS,TMT,TND,TOP,TRY,TTD,TWD,TZS,UAH,UGX,USD,UYU,UZS,VES,VND,
    VUV,WST,XAF,XCD,XCG,XOF,XPF,YER,ZAR,ZMW,ZWG}'::text[]);
end
$$;

create or replace function private.random_code(length integer)
returns text
language plpgsql
set search_path = ''
as $$
begin
  return (
    select string_agg(substr('23456789ABCDEFGHJKMNPQRSTUVWXYZ', 1 + floor(random() * 31)::int, 1), '')
    from generate_series(1, length)
  );
end
$$;

create or replace function private.random_door_code()
returns text
language plpgsql
set search_path = ''
as $$
begin
  -- Six digits from a cryptographic source: door codes are secrets, unlike confirmation codes.
  return lpad(((('x' || encode(extensions.gen_random_bytes(4), 'hex'))::bit(32)::bigint & 2147483647) % 1000000)::text, 6, '0');
end
$$;
