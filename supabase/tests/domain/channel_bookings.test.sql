-- A channel's bookings as api_integration writes them: on the key's properties, with a
-- channel and no unit, only with reservations:write, priced and checked by the same
-- triggers as the front desk's; changes only to the stays that carry a channel. And what a
-- key with ari:read reads of its property's availability, rates and restrictions.
begin;
\ir ../helpers/setup.psql
select plan(25);

grant usage on schema extensions to api_integration;

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset
select tests.make_tenant('Beta') as fx_beta \gset
insert into public.properties (tenant_id, name, timezone, currency)
  values (tests.fx('tenants'), 'Alpha Hillside', 'Europe/Lisbon', 'EUR') returning id as other_property \gset

select tests.act_as('Alpha_admin', tests.fx('tenants'));
select tests.issue_key('wwwwwwwwwwwwwwww', 'writer', array[tests.fx('properties')], '{reservations:read,reservations:write}');
select tests.issue_key('rrrrrrrrrrrrrrrr', 'reader', array[tests.fx('properties')]);

-- What booking reads.
select tests.act_as_key('wwwwwwwwwwwwwwww', 'writer');
select results_eq($$select count(*)::integer from public.properties$$, array[1],
  'a writing key reads its own property, not the tenant''s other one');
select results_eq($$select count(*)::integer from public.rate_plan_days$$, array[1], 'and its plans'' calendar days');
select throws_ok($$select count(*) from public.guests$$, '42501', null, 'it never reads guests');
select tests.act_as_key('rrrrrrrrrrrrrrrr', 'reader');
select results_eq($$select count(*)::integer from public.room_types$$, array[0], 'a reading key reads no room type');
select is(tests.error_of(format($$select private.channel_guest('Ada', 'X', null, null, null, null)$$)), '42501',
  'nor names a booking''s guest');
select is(tests.error_of(format($$insert into public.reservations (property_id, room_type_id, rate_plan_id, guest_id, check_in,
    check_out, channel, external_reference) values (%L, %L, %L, %L, '2032-01-10', '2032-01-13', 'Booking.com', 'R-0')$$,
    tests.fx('properties'), tests.fx('room_types'), tests.fx('rate_plans'), tests.fx('guests'))), '23503',
  'nor books a stay: the property is not one it sees');

-- The guest: found by email in any case, else added.
select tests.act_as_key('wwwwwwwwwwwwwwww', 'writer');
select is(private.channel_guest('Ada', 'Whoever', 'ALPHA.Guest@Example.com', '+351912345678', 'PT', null), tests.fx('guests'),
  'a guest with the email is found, whatever its case');
select private.channel_guest('Maria', 'Costa', 'maria.costa@guest.example', null, null, 'pt-PT') as new_guest \gset
select isnt(:'new_guest'::uuid, tests.fx('guests'), 'an unknown guest is added');

-- A booking, priced from the calendar by the same trigger as the front desk's.
select lives_ok(format($$insert into public.reservations (property_id, room_type_id, rate_plan_id, guest_id, check_in, check_out,
    adults, status, source, channel, external_reference)
  values (%L, %L, %L, %L, '2032-01-10', '2032-01-13', 2, 'confirmed', 'ota', 'Booking.com', 'BDC-1')$$,
  tests.fx('properties'), tests.fx('room_types'), tests.fx('rate_plans'), :'new_guest'), 'a writing key books a stay with a channel');
select results_eq($$select total_amount, price_overridden, currency, unit_id is null, created_by is null
                    from public.reservations where external_reference = 'BDC-1'$$,
  $$values (36000::bigint, false, 'EUR', true, true)$$, 'priced from the calendar, with no unit and no creator');
select throws_ok(format($$insert into public.reservations (property_id, room_type_id, rate_plan_id, guest_id, check_in, check_out,
    source, channel, external_reference) values (%L, %L, %L, %L, '2032-02-10', '2032-02-11', 'ota', 'Booking.com', 'BDC-1')$$,
  tests.fx('properties'), tests.fx('room_types'), tests.fx('rate_plans'), :'new_guest'), '23505', null,
  'a channel''s reference books once');
select lives_ok(format($$insert into public.reservations (property_id, room_type_id, rate_plan_id, guest_id, check_in, check_out,
    source, channel, external_reference) values (%L, %L, %L, %L, '2032-02-10', '2032-02-11', 'ota', 'Expedia', 'BDC-1')$$,
  tests.fx('properties'), tests.fx('room_types'), tests.fx('rate_plans'), :'new_guest'), 'another channel numbers its own');
select is(tests.error_of(format($$insert into public.reservations (property_id, room_type_id, rate_plan_id, guest_id, check_in,
    check_out) values (%L, %L, %L, %L, '2032-03-10', '2032-03-11')$$,
  tests.fx('properties'), tests.fx('room_types'), tests.fx('rate_plans'), :'new_guest')), '42501', 'a booking without a channel is refused');
select is(tests.error_of(format($$insert into public.reservations (property_id, unit_id, guest_id, check_in, check_out, channel)
    values (%L, %L, %L, '2032-03-10', '2032-03-11', 'Airbnb')$$, tests.fx('properties'), tests.fx('units'), :'new_guest')),
  '42501', 'a booking names no unit');
select is(tests.error_of(format($$insert into public.reservations (property_id, guest_id, check_in, check_out, channel)
    values (%L, %L, '2032-03-10', '2032-03-11', 'Airbnb')$$, :'other_property', :'new_guest')), '23503',
  'nor on another property of the tenant, which it does not see');

-- Changes: to the channel's stays only, never past what a channel does.
select is(tests.rows_changed($$update public.reservations set check_out = '2032-01-14' where external_reference = 'BDC-1' and channel = 'Booking.com'$$),
  1::bigint, 'a channel''s stay moves');
select results_eq($$select total_amount from public.reservations where external_reference = 'BDC-1' and channel = 'Booking.com'$$,
  array[48000::bigint], 'and is priced again');
select is(tests.rows_changed(format($$update public.reservations set notes = 'x' where id = %L$$, tests.fx('reservations'))),
  0::bigint, 'the front desk''s own stay is not changed');
select is(tests.error_of($$update public.reservations set status = 'no_show' where external_reference = 'BDC-1' and channel = 'Booking.com'$$),
  '42501', 'a channel never marks a no-show (nor checks in or out)');
select is(tests.rows_changed($$update public.reservations set status = 'cancelled' where external_reference = 'BDC-1' and channel = 'Booking.com'$$),
  1::bigint, 'a channel cancels its stay');

-- ARI: for a key with ari:read, of its own property only; the held stays counted whoever booked them.
select is(private.channel_ari(tests.fx('properties'), '2032-01-10', '2032-01-12')::jsonb, null, 'no ARI without ari:read');
select tests.act_as('Alpha_admin', tests.fx('tenants'));
select tests.issue_key('aaaaaaaaaaaaaaaa', 'ari', array[tests.fx('properties')], '{ari:read}');
select tests.act_as_key('aaaaaaaaaaaaaaaa', 'ari');
select is(private.channel_ari(:'other_property', '2032-01-10', '2032-01-12')::jsonb, null, 'nor for another property of the tenant');
select is((select jsonb_build_array(t -> 'units', t -> 'holdStarts', t -> 'holdEnds')
            from (select (private.channel_ari(tests.fx('properties'), '2030-06-01', '2030-06-05') -> 'roomTypes' -> 0)::jsonb) x(t)),
  '[1, [0], [3]]'::jsonb, 'the front desk''s stay holds a room of the type it cannot read');
select is((select jsonb_build_array(p -> 'defaults' -> 'price', p -> 'changes' -> 'price')
            from (select (private.channel_ari(tests.fx('properties'), '2031-02-05', '2031-02-07') -> 'ratePlans' -> 0)::jsonb) x(p)),
  '[12000, {"days": [1], "values": [15000]}]'::jsonb, 'a day of its own is a change from the plan''s defaults');

-- Another tenant's key reaches nothing of Alpha's.
select tests.act_as('Beta_admin', (:'fx_beta'::jsonb ->> 'tenants')::uuid);
select tests.issue_key('bbbbbbbbbbbbbbbb', 'beta', array[(:'fx_beta'::jsonb ->> 'properties')::uuid], '{reservations:write}');
select tests.act_as_key('bbbbbbbbbbbbbbbb', 'beta');
select is(tests.rows_changed($$update public.reservations set notes = 'x' where channel is not null$$), 0::bigint,
  'another tenant''s key changes none of Alpha''s channel stays');

select * from finish();
rollback;
