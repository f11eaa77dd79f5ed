-- An integration syncs its property's reservations by `updatedSince`, in the order they changed.
create index reservations_tenant_property_updated_idx on public.reservations (tenant_id, property_id, updated_at);
