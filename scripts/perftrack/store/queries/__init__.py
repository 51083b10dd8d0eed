"""The store's named queries, one room per consumer's noun; `Store` inherits them all.

Like rustc-perf's `database/` (one method per query, no SQL in `site/`), every read
another stage makes of the results DB is a method here, taking parameters and returning
rows, dicts or plain values; the one write outside ingest (detect's derived tables) goes
through `Store.replace_derived` under the store's lock. Queries name tables (`results`,
`runs`, `servers`, `verdicts`, …), never files.

  base     the connection and the two row shapes every query returns
  series   results grouped by series: values, noise samples, nightly points, last runs
  derived  the tables `detect` derives (noise, verdicts, change points) and their write
  alerts   each change detect reported, once, with its state (schema v7)
  site     the site's data sets (servers, newest repeats, history, runs, cost)
  runs     what given runs produced (the job summary, sequential comparisons)
  planning what planning reads (past durations, servers seen, open regressions)
  snapshot a table copied to a Parquet file (the site's SQL page)
  studies  a study's cells: counted per server, and the records of the cells it plans
"""
