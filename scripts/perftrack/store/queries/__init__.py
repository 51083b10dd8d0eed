"""The store's named queries, one room per noun they return; `Store` inherits them all.

Like rustc-perf's `database/` (one method per query, no SQL in `site/`), every read
another stage makes of the results DB is a method here, taking parameters and returning
rows, dicts or plain values; the one write outside ingest (detect's derived tables) goes
through `Store.replace_derived` under the store's lock. Queries name tables (`results`,
`runs`, `servers`, `verdicts`, …), never files.

  base      the connection and the two row shapes every query returns
  series    results grouped by series: values, noise samples, nightly points, last runs
  points    nightly points as arrays (series.nightly_points)
  verdicts  the tables `detect` derives (noise, verdicts, change points) and their write
  alerts    each change detect reported, once, with its state (schema v7)
  results   results as the site shows them (the newest run's repeats and cost, counts)
  servers   servers and machines (each server's newest version string, the hardware)
  runs      every run and what given runs produced (run pages, job summary, comparisons)
  history   the site's nightly history (histtable: the table DuckDB writes out)
  pastruns  past runs as planning reads them (durations, servers seen, open regressions)
  cells     a study's cells: counted per server, and the records of the cells it plans
  snapshot  a table copied to a Parquet file (the site's SQL page)

The file machinery under them (the DuckDB file, its lock, the night files, their format,
the migrations, the read caches) is the other room, `store/files/`: queries import it,
never the reverse (a contract in pyproject.toml).
"""
