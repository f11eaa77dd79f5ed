-- A room type's inventory: on no night more held stays of a type than its units in
-- service that night, whoever writes; dated blocks take a unit out on their nights.
begin;
\ir ../helpers/setup.psql
select plan(32);

select tests.use_fixture(tests.make_tenant('Alpha')) as fx \gset

-- A stay of the fixture's property, booked as whoever acts.
create function tests.book(room_type uuid, arrival date, departure date, unit uuid default null, adults integer default 1,
                           children integer default 0)
returns uuid language sql as $$
  insert into public.reservations (property_id, room_type_id, unit_id, guest_id, check_in, check_out, adults, children)
  values (tests.fx('properties'), room_type, unit, tests.fx('guests'), arrival, departure, adults, children)
  returning id
$$;

-- The refusal's machine-readable part: the rule and the nights.
create function tests.inventory_refusal(statement text) returns jsonb language plpgsql as $$
declare
  rule text;
  detail text;
begin
  execute statement;
  return null;
exception when others then
  get stacked diagnostics rule = constraint_name, detail = pg_exception_detail;
  return jsonb_build_object('rule', rule, 'detail', detail::jsonb);
end
$$;


-- A double with two units, a suite with one, as the owner sets them up.
select tests.act_as('Alpha_owner', tests.fx('tenants'));
insert into public.room_types (property_id, code, name, standard_occupancy, max_occupancy, max_children)
values (tests.fx('properties'), 'DBL', 'Double', 2, 3, 1) returning id as dbl \gset
insert into public.room_types (property_id, code, name, max_occupancy)
values (tests.fx('properties'), 'STE', 'Suite', 4) returning id as ste \gset
insert into public.units (property_id, name, capacity, room_type_id) values (tests.fx('properties'), 'D1', 3, :'dbl')
returning id as d1 \gset
insert into public.units (property_id, name, capacity, room_type_id) values (tests.fx('properties'), 'D2', 3, :'dbl')
returning id as d2 \gset
insert into public.units (property_id, name, capacity, room_type_id) values (tests.fx('properties'), 'S1', 4, :'ste')
returning id as s1 \gset

-- A unit created without a type joins the type of its kind and capacity, made once.
insert into public.units (property_id, name, capacity) values (tests.fx('properties'), 'Loft', 5) returning id as loft \gset
select results_eq(format($$select rt.code, rt.name, rt.max_occupancy, rt.standard_occupancy
                          from public.units u join public.room_types rt on rt.id = u.room_type_id where u.id = %L$$, :'loft'),
  $$values ('ROOM-5', 'Room for 5', 5, 2)$$, 'a unit without a type gets its kind and capacity''s type, made for it');
insert into public.units (property_id, name, capacity) values (tests.fx('properties'), 'Loft 2', 5) returning id as loft2 \gset
select is((select room_type_id from public.units where id = :'loft2'), (select room_type_id from public.units where id = :'loft'),
  'the next unit of the same kind and capacity joins the same type');

-- Staff book by type, without units.
select tests.act_as('Alpha_staff', tests.fx('tenants'));

select tests.book(:'dbl', '2035-06-01', '2035-06-04') as first_stay \gset
select tests.book(:'dbl', '2035-06-02', '2035-06-05') as second_stay \gset
select throws_ok(format('select tests.book(%L, ''2035-06-03'', ''2035-06-06'')', :'dbl'), 'PT409',
  'the room type has no room left on 2035-06-03',
  'a third stay of a two-unit type on a night both hold is refused, naming the night');
select lives_ok(format('select tests.book(%L, ''2035-06-05'', ''2035-06-07'')', :'dbl'),
  'a stay arriving on the day the others leave fits');
select lives_ok(format('select tests.book(%L, ''2035-06-01'', ''2035-06-04'')', :'ste'),
  'another type has its own inventory');

-- A stay that checked in long before the nights asked still holds them: the held stays
-- are read from the tenant's longest stay before the first night.
select tests.book(:'dbl', '2037-01-01', '2037-03-01') as long_stay \gset
select tests.book(:'dbl', '2037-02-10', '2037-02-12') as short_stay \gset
select throws_ok(format('select tests.book(%L, ''2037-02-11'', ''2037-02-13'')', :'dbl'), 'PT409',
  'the room type has no room left on 2037-02-11',
  'a stay that arrived seven weeks before still holds its room on the nights asked');
select lives_ok(format('select tests.book(%L, ''2037-03-01'', ''2037-03-03'')', :'dbl'),
  'and frees it on the day it leaves');
update public.reservations set status = 'cancelled'
where id in (:'long_stay', :'short_stay') or (room_type_id = :'dbl' and check_in = '2037-03-01');

select is(tests.inventory_refusal(format('select tests.book(%L, ''2035-06-02'', ''2035-06-05'')', :'dbl')),
  jsonb_build_object('rule', 'reservations_room_type_inventory',
                     'detail', jsonb_build_object('roomTypeId', :'dbl', 'nights', jsonb_build_array('2035-06-02', '2035-06-03'))),
  'the refusal names its rule, the type and every night without room');

-- A cancelled stay frees its nights; a stay that only shortens always fits.
update public.reservations set status = 'cancelled' where id = :'second_stay';
select lives_ok(format('select tests.book(%L, ''2035-06-03'', ''2035-06-05'')', :'dbl'), 'a cancelled stay''s nights are free again');
select lives_ok(format('update public.reservations set check_out = ''2035-06-03'' where id = %L', :'first_stay'),
  'a stay that shortens takes nothing more');
select tests.book(:'dbl', '2035-06-03', '2035-06-04') as filler \gset
select throws_ok(format('update public.reservations set check_out = ''2035-06-05'' where id = %L', :'first_stay'), 'PT409', null,
  'a stay that lengthens into full nights is refused');
select throws_ok(format('update public.reservations set room_type_id = %L where id = %L', :'ste', :'first_stay'), 'PT409', null,
  'a stay moved to a type that is full on its nights is refused');

-- The party the type takes.
select throws_ok(format('select tests.book(%L, ''2036-01-01'', ''2036-01-02'', adults => 4)', :'dbl'), 'PT422', null,
  'more guests than the type takes are refused');
select throws_ok(format('select tests.book(%L, ''2036-01-01'', ''2036-01-02'', adults => 1, children => 2)', :'dbl'), 'PT422', null,
  'more children than the type takes are refused');
select lives_ok(format('select tests.book(%L, ''2036-01-01'', ''2036-01-02'', adults => 2, children => 1)', :'dbl'),
  'a party within every maximum fits');

-- A unit takes its type: given alone, a stay gets it; given another, the stay is refused.
select tests.book(null, '2036-02-01', '2036-02-03', :'d1') as unit_stay \gset
select is((select room_type_id from public.reservations where id = :'unit_stay'), :'dbl'::uuid, 'a stay booked by unit gets the unit''s type');
select throws_ok(format('select tests.book(%L, ''2036-02-10'', ''2036-02-11'', %L)', :'ste', :'d1'), '23514',
  'the unit is not of the stay''s room type', 'a unit of another type is refused');

-- Blocks: the unit is out of order on their nights.
select tests.act_as('Alpha_admin', tests.fx('tenants'));
insert into public.unit_blocks (unit_id, starts_on, ends_on, reason) values (:'d2', '2036-03-01', '2036-03-05', 'Burst pipe')
returning id as block \gset
select is((select property_id from public.unit_blocks where id = :'block'), tests.fx('properties'), 'a block takes its unit''s property');
select tests.act_as('Alpha_staff', tests.fx('tenants'));
select tests.book(:'dbl', '2036-03-02', '2036-03-03') as march_stay \gset
select ok(:'march_stay'::uuid is not null, 'the type''s other unit still sells');
select throws_ok(format('select tests.book(%L, ''2036-03-02'', ''2036-03-03'')', :'dbl'), 'PT409', null,
  'a blocked unit counts out of its type: the second stay of those nights is refused');
select throws_ok(format('select tests.book(%L, ''2036-03-04'', ''2036-03-06'', %L)', :'dbl', :'d2'), 'PT409',
  'the unit is out of order from 2036-03-01 to 2036-03-05', 'a stay on a blocked unit is refused, naming the block');
select lives_ok(format('select tests.book(%L, ''2036-03-05'', ''2036-03-06'', %L)', :'dbl', :'d2'),
  'the unit takes stays again from the block''s end');
select throws_ok(format('insert into public.unit_blocks (unit_id, starts_on, ends_on, reason) values (%L, ''2036-03-03'', ''2036-03-05'', ''Paint'')', :'d2'),
  '23P01', null, 'two blocks of one unit never overlap');

-- A block never covers a held stay, nor takes a unit its type needs.
select is(tests.inventory_refusal(format('insert into public.unit_blocks (unit_id, starts_on, ends_on, reason) values (%L, ''2036-02-02'', ''2036-02-04'', ''Paint'')', :'d1')) ->> 'rule',
  'unit_blocks_no_held_stay', 'a block over a held stay is refused');
select is(tests.inventory_refusal(format('insert into public.unit_blocks (unit_id, starts_on, ends_on, reason) values (%L, ''2036-02-02'', ''2036-02-04'', ''Paint'')', :'d1')) -> 'detail' ->> 'reservationId',
  :'unit_stay', 'the refusal names the stay');
select tests.book(:'dbl', '2036-04-01', '2036-04-03') as unassigned_1 \gset
select tests.book(:'dbl', '2036-04-01', '2036-04-03') as unassigned_2 \gset
select is(tests.inventory_refusal(format('insert into public.unit_blocks (unit_id, starts_on, ends_on, reason) values (%L, ''2036-04-02'', ''2036-04-03'', ''Paint'')', :'d1')) ->> 'rule',
  'unit_blocks_room_type_inventory', 'a block that would leave the type short of its unassigned stays is refused');
select lives_ok(format('update public.unit_blocks set reason = ''Burst pipe, floor up'', ends_on = ''2036-03-04'' where id = %L', :'block'),
  'a block shortens');

-- A unit leaving service or its type.
select tests.act_as('Alpha_owner', tests.fx('tenants'));
select is(tests.inventory_refusal(format('update public.units set status = ''out_of_service'' where id = %L', :'d1')) ->> 'rule',
  'units_hold_stays', 'a unit holding a stay from today on does not leave service');
update public.reservations set unit_id = null where id = :'unit_stay';
select is(tests.inventory_refusal(format('update public.units set status = ''out_of_service'' where id = %L', :'d1')) ->> 'rule',
  'units_room_type_inventory', 'nor one its type needs for its stays');
select is(tests.inventory_refusal(format('delete from public.units where id = %L', :'d1')) ->> 'rule',
  'units_room_type_inventory', 'nor is it deleted then');
update public.reservations set status = 'cancelled' where id in (:'unassigned_2', :'march_stay', :'filler');
select lives_ok(format('update public.units set status = ''out_of_service'' where id = %L', :'d1'),
  'once the type has room without it, it leaves');
select throws_ok(format('update public.reservations set unit_id = %L where id = %L', :'d1', :'unassigned_1'), 'PT409', null,
  'a unit out of service takes no stay');

select * from finish();
rollback;
