-- Every constraint is named in the migrations, and the names say what they hold. A
-- column's own check is <table>_<column>_check, the name src/http/database-refusals.ts turns into
-- the field a client sent; a check across columns is named for its rule, and the API
-- finds some of those by name. Left to Postgres, a check across columns would be
-- <table>_check, <table>_check1, ... by position, which says nothing and moves when
-- another check is added before it.
begin;
\ir ../helpers/setup.psql
select plan(4);

create temporary view named_constraints as
  select r.relname::text as table_name, c.conname::text as name, c.contype, c.conkey,
         (select array_agg(a.attname::text order by a.attnum) from pg_catalog.pg_attribute a
          where a.attrelid = c.conrelid and a.attnum = any (c.conkey)) as columns
  from pg_catalog.pg_constraint c
  join pg_catalog.pg_class r on r.oid = c.conrelid
  where c.connamespace in ('public'::regnamespace, 'private'::regnamespace);

select isnt_empty('select * from named_constraints where contype = ''c''', 'the schemas have check constraints to judge');

select is_empty(
  $$ select table_name || '.' || name from named_constraints
     where name ~ ('^' || table_name || '_check[0-9]*$') or name ~ '_(check|key|fkey|pkey|excl)[0-9]+$' $$,
  'no constraint has a positional name (<table>_check, <table>_check1, <name>_key1, ...)');

select is_empty(
  $$ select table_name || '.' || name from named_constraints
     where contype = 'c' and name ~ '_check$'
       and not (cardinality(conkey) = 1 and name = table_name || '_' || columns[1] || '_check') $$,
  'a check named <table>_<column>_check holds that one column, and only such a check is named so');

select results_eq(
  $$ select (table_name || '.' || name) collate "default" from named_constraints
     where contype = 'c' and cardinality(conkey) > 1 order by 1 $$,
  $$ values ('access_codes.access_codes_valid_until_after_valid_from'),
            ('api_keys.api_keys_expire_after_creation'),
            ('ari_changes.ari_changes_days_in_order'),
            ('calendar_feeds.calendar_feeds_unit_or_room_type'),
            ('guests.guests_email_undeliverable_with_reason'),
            ('notifications.notifications_delivery_state_at_with_state'),
            ('notifications.notifications_delivery_state_only_when_sent'),
            ('notifications.notifications_recipient_matches_type'),
            ('notifications.notifications_send_started_only_while_pending'),
            ('notifications.notifications_sent_at_exactly_when_sent'),
            ('payment_links.payment_links_expire_after_creation'),
            ('payments.payments_external_source_has_external_reference'),
            ('payments.payments_link_exactly_when_source_is_payment_link'),
            ('rate_plan_days.rate_plan_days_max_stay_not_below_min_stay'),
            ('rate_plans.rate_plans_derivation_complete'),
            ('rate_plans.rate_plans_max_stay_not_below_min_stay'),
            ('rate_plans.rate_plans_non_refundable_without_free_cancellation'),
            ('reservations.reservations_check_out_after_check_in'),
            ('reservations.reservations_stay_at_most_365_nights'),
            ('room_types.room_types_max_adults_within_max_occupancy'),
            ('room_types.room_types_max_children_below_max_occupancy'),
            ('room_types.room_types_standard_within_max_occupancy'),
            ('unit_blocks.unit_blocks_at_most_3660_nights'),
            ('unit_blocks.unit_blocks_ends_after_start'),
            ('webhook_deliveries.webhook_deliveries_ended_exactly_when_not_pending'),
            ('webhook_subscriptions.webhook_subscriptions_disabled_with_reason_and_time'),
            ('webhook_subscriptions.webhook_subscriptions_previous_secret_with_expiry') $$,
  'the checks across columns are these, each named for its rule');

select * from finish();
rollback;
