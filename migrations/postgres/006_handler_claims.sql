-- Handlers run one at a time per candidate (or campaign, or the account), in inbox order, across
-- every process that shares the database: each row names its key from the moment it is stored,
-- and a process claims a row's handlers only when no earlier row of the key is still pending
-- projection or has handlers due, with a lease that it renews while the handlers run. A process
-- that dies loses its claims when their leases end.
ALTER TABLE inbox ADD COLUMN handler_key text;
ALTER TABLE inbox ADD COLUMN handlers_owner text;
ALTER TABLE inbox ADD COLUMN handlers_lease_until timestamptz;
CREATE INDEX inbox_handlers_by_key ON inbox (handler_key, inbox_id) WHERE handlers_pending OR state = 'pending';
