-- How a destination proves who is calling, as it may be shown (src/destinations/authentication.ts,
-- DestinationAuth, JSON): the names of its headers, its OAuth2 client and token URL, its client
-- certificate's subject and fingerprint, the signatures it sends. Never a value, a secret or a key:
-- those are sealed with the URL (`sealed`). NULL for a destination added before: an http(s) one signs
-- v1, and its URL as shown says whether it holds user info.
ALTER TABLE destinations ADD COLUMN auth TEXT;
