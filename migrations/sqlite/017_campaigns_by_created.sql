-- The campaigns are listed a page at a time in the list's order: newest first, then the campaigns
-- known only through candidates (no creation date) by id. SQLite sorts NULL below every value, so
-- a descending date puts them last. Each page reads this index from where the last one ended and
-- stops at its end, however many campaigns there are.
CREATE INDEX campaigns_by_created ON campaigns (account, created_at DESC, campaign_id);
