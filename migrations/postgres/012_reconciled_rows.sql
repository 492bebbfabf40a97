-- Erasure reads the rows reconciliation wrote (reconcile.* events hold candidates' values) and
-- matches them by value, as it does the rows set aside: this index finds them without reading the
-- whole inbox. Webhooks never enter it, so intake writes nothing more.
CREATE INDEX inbox_reconciled ON inbox (inbox_id) WHERE kind LIKE 'reconcile.%';
