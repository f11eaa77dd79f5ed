-- The external API's rate limits: private.admit_api_key_request counts a key's requests
-- per window and an address's unknown keys per window, and answers with the outcome and
-- the numbers of the RateLimit fields. The whole test is one transaction, so now() stands
-- still: a window's end is moved by moving its start. That several sessions share one
-- count exactly is shown through the API (test/external/rate-limit.test.ts).
begin;
\ir ../helpers/setup.psql
select plan(37);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

create function tests.admit(key_id text, secret text, address text default null)
returns table (outcome text, policy text, quota integer, window_seconds integer, remaining integer, reset_seconds integer)
language sql as $$
  select * from private.admit_api_key_request(key_id, sha256(convert_to(secret, 'UTF8')), address)
$$;

select tests.act_as_operator();
insert into public.api_keys (tenant_id, all_properties, name, key_id, secret_hash, last_four)
  values (tests.fx('tenants'), true, 'Channel manager', 'aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea), 'of-a'),
         (tests.fx('tenants'), true, 'Payments', 'bbbbbbbbbbbbbbbb', sha256('secret-of-b'::bytea), 'of-b');

-- The tables.
select ok((select relrowsecurity from pg_class where oid = 'public.api_key_request_windows'::regclass),
  'api_key_request_windows: row-level security is enabled');
select ok((select relrowsecurity from pg_class where oid = 'private.failed_api_key_attempts'::regclass),
  'failed_api_key_attempts: row-level security is enabled');
select results_eq(
  $$select relpersistence::text from pg_class
    where oid in ('public.api_key_request_windows'::regclass, 'private.failed_api_key_attempts'::regclass)$$,
  $$values ('u'), ('u')$$, 'both counters are unlogged: no WAL, no wait for the disk at a request''s commit');
select results_eq($$select rate_limit, rate_limit_window_seconds from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa'$$,
  $$values (600, 60)$$, 'a key may make 600 requests per 60 seconds by default');

-- A key's requests.
select results_eq($$select * from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a')$$,
  $$values ('admitted', 'api-key', 600, 60, 599, 60)$$, 'the first request is admitted and opens a window of 60 seconds');
update public.api_keys set rate_limit = 3 where key_id = 'aaaaaaaaaaaaaaaa';
select results_eq($$select outcome, remaining from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a', '192.0.2.1')$$,
  $$values ('admitted', 1)$$, 'an operator lowers the key''s limit: the next request sees it');
select results_eq($$select outcome, remaining from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a')$$,
  $$values ('admitted', 0)$$, 'the third request spends the limit');
select results_eq($$select * from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a')$$,
  $$values ('limited', 'api-key', 3, 60, 0, 60)$$, 'the fourth is limited, with the seconds until the window ends');
select is((select requests from public.api_key_request_windows where tenant_id = tests.fx('tenants')
           and api_key_id = (select id from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa')), 3,
  'a limited request is not counted');
select results_eq($$select outcome, remaining from tests.admit('bbbbbbbbbbbbbbbb', 'secret-of-b')$$,
  $$values ('admitted', 599)$$, 'another key of the same property counts on its own');

update public.api_key_request_windows set window_start = now() - interval '45 seconds'
  where api_key_id = (select id from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa');
select results_eq($$select outcome, reset_seconds from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a')$$,
  $$values ('limited', 15)$$, 'later in the window, the seconds left shrink');
update public.api_key_request_windows set window_start = now() - interval '60 seconds'
  where api_key_id = (select id from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa');
select results_eq($$select outcome, remaining, reset_seconds from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a')$$,
  $$values ('admitted', 2, 60)$$, 'once the window has ended, the next request opens a new one');
select results_eq($$select requests, window_start = now() from public.api_key_request_windows
                   where api_key_id = (select id from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa')$$,
  $$values (1, true)$$, 'counted from one, from now');

update public.api_keys set rate_limit_window_seconds = 1 where key_id = 'bbbbbbbbbbbbbbbb';
select results_eq($$select quota, window_seconds, reset_seconds from tests.admit('bbbbbbbbbbbbbbbb', 'secret-of-b')$$,
  $$values (600, 1, 1)$$, 'a window of one second: its end is never less than a second away in whole seconds');
select throws_ok($$update public.api_keys set rate_limit = 0 where key_id = 'bbbbbbbbbbbbbbbb'$$, '23514', null,
  'a limit is at least one request');
select throws_ok($$update public.api_keys set rate_limit_window_seconds = 86401 where key_id = 'bbbbbbbbbbbbbbbb'$$, '23514', null,
  'a window is at most a day');

-- Keys that count nowhere.
update public.api_keys set revoked_at = now() where key_id = 'bbbbbbbbbbbbbbbb';
select results_eq($$select * from tests.admit('bbbbbbbbbbbbbbbb', 'secret-of-b', '192.0.2.1')$$,
  $$values ('inactive', null::text, null::integer, null::integer, null::integer, null::integer)$$,
  'a revoked key is inactive and counted nowhere');
select results_eq($$select * from tests.admit('aaaaaaaaaaaaaaaa', 'wrong-secret')$$,
  $$values ('invalid', null::text, null::integer, null::integer, null::integer, null::integer)$$,
  'a wrong secret without a client address is invalid, counted nowhere');
select is_empty($$select 1 from private.failed_api_key_attempts where client_address = '192.0.2.1'$$,
  'an address that sent only valid keys has no row');

-- An address's unknown keys.
set local app.failed_api_key_limit = '3';
select results_eq($$select * from private.failed_api_key_policy()$$, $$values (3, 60)$$,
  'the database''s setting sets the failed keys'' quota');
select results_eq($$select * from tests.admit('aaaaaaaaaaaaaaaa', 'wrong-secret', '192.0.2.7')$$,
  $$values ('invalid', 'failed-keys', 3, 60, 2, 60)$$, 'a wrong secret counts for its address');
select results_eq($$select outcome, remaining from tests.admit('zzzzzzzzzzzzzzzz', 'secret-of-a', '192.0.2.7')$$,
  $$values ('invalid', 1)$$, 'an unknown key id counts alike');
select results_eq($$select outcome, remaining from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a', '192.0.2.7')$$,
  $$values ('admitted', 1)$$, 'a valid key from that address is served while it is under the limit');
select results_eq($$select outcome, remaining from tests.admit('zzzzzzzzzzzzzzzz', 'secret-of-a', '192.0.2.7')$$,
  $$values ('invalid', 0)$$, 'the third unknown key spends its quota');
select results_eq($$select * from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a', '192.0.2.7')$$,
  $$values ('throttled', 'failed-keys', 3, 60, 0, 60)$$, 'then even a valid key from that address is throttled');
select results_eq($$select outcome from tests.admit('zzzzzzzzzzzzzzzz', 'secret-of-a', '192.0.2.7')$$,
  $$values ('throttled')$$, 'and an unknown one alike');
select is((select failures from private.failed_api_key_attempts where client_address = '192.0.2.7'), 3,
  'a throttled request is not counted');
select is((select requests from public.api_key_request_windows
           where api_key_id = (select id from public.api_keys where key_id = 'aaaaaaaaaaaaaaaa')), 2,
  'nor counted for the key it carried');
select results_eq($$select outcome, remaining from tests.admit('zzzzzzzzzzzzzzzz', 'secret-of-a', '2001:db8::7')$$,
  $$values ('invalid', 2)$$, 'another address has its own count');
update private.failed_api_key_attempts set window_start = now() - interval '60 seconds' where client_address = '192.0.2.7';
select results_eq($$select outcome, remaining from tests.admit('aaaaaaaaaaaaaaaa', 'secret-of-a', '192.0.2.7')$$,
  $$values ('admitted', 0)$$, 'once the address''s window has ended, its valid key is served again');
set local app.failed_api_key_limit = 'many';
select results_eq($$select * from private.failed_api_key_policy()$$, $$values (20, 60)$$,
  'a setting that is not a whole number in range leaves the default, 20 per 60 seconds');

-- The purge takes the addresses whose window has ended, and only those.
select cmp_ok(private.purge_failed_api_key_attempts(), '>=', 1, 'the purge deletes addresses whose window ended');
select results_eq($$select client_address from private.failed_api_key_attempts
                   where client_address in ('192.0.2.7', '2001:db8::7')$$,
  $$values ('2001:db8::7')$$, 'that one among them, and not the one whose window runs');

-- Who may reach the counters.
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select is((select count(*) from public.api_key_request_windows), 2::bigint, 'a manager reads their keys'' windows');
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select is((select count(*) from public.api_key_request_windows), 0::bigint, 'staff read none');
select throws_ok($$select * from private.admit_api_key_request('aaaaaaaaaaaaaaaa', sha256('secret-of-a'::bytea), null)$$,
  '42501', null, 'a signed-in user cannot call the limiter');
select throws_ok($$select * from private.failed_api_key_attempts$$, '42501', null, 'nor read the addresses');

select * from finish();
rollback;
