-- Per-account feed tokens (docs/changes.md): the token that opens one account's change feed
-- alone, kept as its SHA-256 in hex (the registry never holds the token itself); NULL: none.
ALTER TABLE accounts ADD COLUMN feed_token_sha256 text;
