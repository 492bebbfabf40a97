-- A destination held paused until an operator enables it (hold = 1): a Redis stream this receiver
-- did not write (another's, or a database restored from an older backup) is not probed, since a
-- probe that appended would write into someone else's log. `kind`: 'changes' (the account's
-- changes, 017_changes.sql) or 'operational' (the account's operator events, below, instead).
ALTER TABLE destinations ADD COLUMN hold integer NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN kind text NOT NULL DEFAULT 'changes';

-- What operators are told of their destinations (docs/destinations.md, "Operator events"): a
-- destination paused, resumed or disabled, a delivery set aside. Numbered per account, as changes
-- are, and delivered to the account's operational destinations as changes are to the others.
CREATE TABLE operator_events (
  account     text NOT NULL,
  seq         bigint NOT NULL,
  type        text NOT NULL,           -- destination.paused, destination.resumed, destination.disabled, delivery.dead
  destination text NOT NULL,           -- the destination concerned
  at          text NOT NULL,           -- UTC ISO 8601 with milliseconds
  reason      text,
  change_seq  bigint,                  -- delivery.dead: the seq of the change set aside
  PRIMARY KEY (account, seq)
);

CREATE TABLE operator_event_heads (
  account  text PRIMARY KEY,
  last_seq bigint NOT NULL
);
