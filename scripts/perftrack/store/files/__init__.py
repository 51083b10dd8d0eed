"""The store's file machinery: the DuckDB file and the files beside it, below the queries.

  dbfile       the DuckDB file: create, open (locked, corrupt, newer format told apart)
  lock         the lock file beside the DB (write: exclusive, read: shared)
  codecheck    a DB may carry no code perftrack did not put there
  migrations   forward-only schema migrations
  nightfiles   the immutable night files (one set of Parquet files per ingest), their views
  nightformat  how a results night file stores its values (exactly, in fewer bytes)
  batch        one batch of records written as a new set of night files
  rows         a record as the DB's rows (and the tables' columns)
  variables    the server variables a record's rows keep
  intake       record files read, validated and prepared, on every core
  sqltext      SQL text around values that cannot be bound as parameters
  readcache, answers, rolling
               caches of answers over the immutable files (docs/schema.md)

Layered, top to bottom (a contract in pyproject.toml): no module imports one above it,
so nothing here imports in a circle, and nothing here imports `store/queries/`.
"""
