-- The campaigns are listed a page at a time in the list's order: newest first, then the campaigns
-- known only through candidates (no creation date) by id. Each page reads these indexes from where
-- the last one ended and stops at its end, however many campaigns there are. The undated have an
-- index of their own: PostgreSQL does not take `created_at IS NULL` as fixing the date, so it would
-- not read the first index in id order for them, and would walk every campaign by primary key.
CREATE INDEX campaigns_by_created ON campaigns (account, created_at DESC NULLS LAST, campaign_id);
CREATE INDEX campaigns_undated ON campaigns (account, campaign_id) WHERE created_at IS NULL;
