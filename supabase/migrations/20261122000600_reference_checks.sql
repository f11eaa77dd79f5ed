-- Checks on codes from outside standards, used by the domain tables' constraints.

-- IANA names only ("Europe/Lisbon", "UTC"), and only ones this server can convert.
create or replace function private.is_iana_timezone(name text)
returns boolean
language plpgsql immutable
set search_path = ''
as $$
begin
  if name !~ '^[A-Za-z][A-Za-z_]*(/[A-Za-z0-9_+-]+){0,2}$' then
    return false;
  end if;
  perform now() at time zone name;
  return true;
exception when invalid_parameter_value then
  return false;
end
$$;

-- Active ISO 4217 codes. Amounts are integer minor units of these.
create or replace function private.is_iso_currency(code text)
returns boolean
language sql immutable
set search_path = ''
as $$
  select code = any ('{AED,AFN,ALL,AMD,ANG,AOA,ARS,AUD,AWG,AZN,BAM,BBD,BDT,BGN,BHD,BIF,BMD,BND,BOB,BRL,
    BSD,BTN,BWP,BYN,BZD,CAD,CDF,CHF,CLP,CNY,COP,CRC,CUP,CVE,CZK,DJF,DKK,DOP,DZD,EGP,ERN,ETB,EUR,FJD,FKP,
    GBP,GEL,GHS,GIP,GMD,GNF,GTQ,GYD,HKD,HNL,HTG,HUF,IDR,ILS,INR,IQD,IRR,ISK,JMD,JOD,JPY,KES,KGS,KHR,KMF,
    KPW,KRW,KWD,KYD,KZT,LAK,LBP,LKR,LRD,LSL,LYD,MAD,MDL,MGA,MKD,MMK,MNT,MOP,MRU,MUR,MVR,MWK,MXN,MYR,MZN,
    NAD,NGN,NIO,NOK,NPR,NZD,OMR,PAB,PEN,PGK,PHP,PKR,PLN,PYG,QAR,RON,RSD,RUB,RWF,SAR,SBD,SCR,SDG,SEK,SGD,
    SHP,SLE,SOS,SRD,SSP,STN,SVC,SYP,SZL,THB,TJS,TMT,TND,TOP,TRY,TTD,TWD,TZS,UAH,UGX,USD,UYU,UZS,VES,VND,
    VUV,WST,XAF,XCD,XCG,XOF,XPF,YER,ZAR,ZMW,ZWG}'::text[])
$$;

-- Short codes people read out over the phone: no 0/O or 1/I/L to confuse.
create or replace function private.random_code(length integer)
returns text
language sql volatile
set search_path = ''
as $$
  select string_agg(substr('23456789ABCDEFGHJKMNPQRSTUVWXYZ', 1 + floor(random() * 31)::int, 1), '')
  from generate_series(1, length)
$$;

grant execute on function private.is_iana_timezone(text), private.is_iso_currency(text),
  private.random_code(integer) to authenticated, service_role;
