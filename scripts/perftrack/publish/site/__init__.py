"""The published static site: `perftrack site build | serve | png`.

Read-only consumer of the results DB. `export` turns the DB into compact per-page data
sets, `build` writes them beside the page templates, Vega-Lite specs and vendored
vega/vega-lite/vega-embed from the checkout's `site/` directory, `serve` shows the result
on 127.0.0.1, and `png` renders one chart offline with vl-convert. See docs/site.md.
"""
