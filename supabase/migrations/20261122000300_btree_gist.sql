-- Exclusion constraints that mix equality on ids with range overlap (a unit's
-- stays, a door's active codes) need btree operator classes under GiST.
create extension if not exists btree_gist with schema extensions;
