-- The W3C traceparent of the request that brought a row, kept only when tracing is on: the
-- projection and handler spans link to the request's span through it.
ALTER TABLE inbox ADD COLUMN trace_context text;
