"""`perftrack site png CHART`: one chart to PNG offline with vl-convert (no browser).

The same spec file and data set as the page, with the page's filter rules: a filter not
given on the command line is "all" where the page allows it, else the most common value
(ties: the first in sort order) — as site/assets/app.js does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perftrack.analysis import annotations as ann
from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.publish.site import export, history, source
from perftrack.store import store

# The filters each chart's page applies, in order, and whether "all" is allowed.
FILTER_ORDER = ("runner_class", "profile", "dataset", "workload", "collation", "threads")
ONE = {
    "overview": (),
    "trend": ("runner_class", "profile", "dataset", "threads"),
    "scaling": ("runner_class", "profile", "dataset", "collation"),
    "charset": ("runner_class", "profile", "dataset", "threads"),
    "heatmap": ("runner_class", "profile", "dataset"),
    "history": FILTER_ORDER,
    "cost": FILTER_ORDER,
}
# PNG size: 2x pixels so text stays sharp in PR comments and job summaries.
SCALE = 2.0
FACET_COLUMNS = 3  # facet charts as on a desktop-width page
CONTAINER_WIDTH = 900  # stands in for the page's container width ("width": "container")


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


def apply_filters(
    chart: str, rows: list[dict[str, Any]], given: dict[str, str]
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    chosen: dict[str, str] = {}
    for key in FILTER_ORDER:
        options = sorted({r.get(key) for r in rows if r.get(key) is not None}, key=_sort_key)
        value = given.get(key)
        if value is not None:
            if value not in {str(o) for o in options}:
                known = ", ".join(map(str, options)) or "none"
                raise ConfigError(f"no {key} '{value}' in the {chart} chart's data; known: {known}")
        elif key in ONE[chart] and options:
            counts: dict[Any, int] = {}
            for r in rows:
                counts[r.get(key)] = counts.get(r.get(key), 0) + 1
            value = str(max(options, key=lambda o: (counts[o], -options.index(o))))
        if value is not None:
            chosen[key] = value
            rows = [r for r in rows if str(r.get(key)) == value]
    return rows, chosen


def _fit(spec: dict[str, Any]) -> None:
    if "facet" in spec and "columns" not in spec:  # a spec's own column count stays
        spec["columns"] = FACET_COLUMNS
    if spec.get("width") == "container":
        spec["width"] = CONTAINER_WIDTH


def render(
    chart: str,
    db: Path,
    out: Path,
    filters: dict[str, str],
    annotations_path: Path | None = None,
) -> tuple[int, dict[str, str]]:
    """Write `out` (PNG); returns (rows drawn, the filters applied)."""
    root = source.site_dir()
    spec = source.spec(root, chart)  # unknown chart -> ConfigError listing the known ones
    notes = ann.read_annotations(annotations_path) if annotations_path else []
    with store.open_db(db, write=False) as st:
        data = export.export_for_chart(st, notes, source.CHARTS[chart])
    rows, chosen = apply_filters(chart, data["table"], filters)
    if not rows:
        raise ConfigError(
            f"nothing to draw: the {chart} chart has no results for {chosen or 'this DB'}"
        )
    if chart == "history":  # as the page does: only the marks of the cell drawn

        def same_cell(row: dict[str, Any]) -> bool:
            return all(row.get(k) is None or str(row[k]) == v for k, v in chosen.items())

        rc = chosen.get("runner_class")
        data["hardware_changes"] = [c for c in data["hardware_changes"] if c["runner_class"] == rc]
        data["change_points"] = [c for c in data["change_points"] if same_cell(c)]
        data["annotations"] = [a for a in data["annotations"] if a["date"] and same_cell(a)]
        data = history.chart_datasets(
            rows, data["change_points"], data["hardware_changes"], data["annotations"]
        )
        rows = data["table"]
        focus = spec["vconcat"][0]  # as the page does: no layer over an empty data set
        focus["layer"] = [x for x in focus["layer"] if data.get(x["data"]["name"])]
        for part in spec["vconcat"]:
            part["width"] = CONTAINER_WIDTH
    spec["datasets"] = {**data, "table": rows}
    if "layer" in spec:  # as the page does: no layer over an empty data set
        spec["layer"] = [
            x
            for x in spec["layer"]
            if x.get("data", {}).get("name") in (None, "table")
            or spec["datasets"].get(x["data"]["name"])
        ]
    _fit(spec)
    try:
        import vl_convert
    except ImportError:
        raise EnvironmentProblem(
            "vl-convert-python is not installed: run `pip install -e .` in the checkout"
        ) from None
    png = vl_convert.vegalite_to_png(spec, scale=SCALE)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(png)
    tmp.replace(out)
    return len(rows), chosen
