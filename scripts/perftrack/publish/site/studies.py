"""StudyPage pages: one per `configs/studies/*.yaml`, our ratios next to the article's.

The page says what `perftrack study report` says, from the same code: the study file is
read by `planning.study.read_study`, the rows, intervals, "outside the noise" marks and claim
checks come from `publish.study_report`, fed with the results DB's records of the cells the
study plans (latest attempt of each, `study_runs.db_records`) instead of a run directory.
The scale shown is the one whose servers have the most cells (`full` wins a tie): a
runner's DB shows the article's servers, this machine's shows the labelled stand-ins.
Who plays each role, and whether a row's side is another product's stand-in (shown for
its direction only, not graded), comes from `planning.study.players` with the catalog of
the studies' configs directory; each row, claim and finding carries the report's grade in
the same words (analysis/grading.py). Skipped and failed cells are listed with their
reasons, like the report's "not measured".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError
from perftrack.planning import study as study_mod
from perftrack.publish import study_report as report
from perftrack.publish import study_runs
from perftrack.servers import catalog as catalog_mod
from perftrack.store.store import Store

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class StudyPage:
    name: str  # file stem: the page is study-NAME.html
    title: str
    study: study_mod.Study
    catalog: catalog_mod.Catalog  # the roles' products and their players' (study_mod.players)


def load_all(directory: Path | None) -> list[StudyPage]:
    """The studies of `directory` (configs/studies), with the catalog of the same configs
    directory (its versions.yaml)."""
    if directory is None or not directory.is_dir():
        return []
    out = []
    cat = None
    for p in sorted(directory.glob("*.yaml")):
        if not NAME_RE.match(p.stem):
            raise ConfigError(f"{p}: study file names are letters, digits, '.', '_' and '-'")
        st = study_mod.read_study(p.stem, directory.parent)
        cat = cat or catalog_mod.read_catalog(directory.parent / catalog_mod.CATALOG_FILENAME)
        out.append(StudyPage(p.stem, st.title, st, cat))
    return out


def page_data(study: StudyPage, db: Store, counts: dict[str, int]) -> dict[str, Any]:
    """Everything the study page shows, from the DB's records of the study's cells;
    `counts`: the cells of each study server (`Store.cell_counts`), which pick the scale."""
    st = study.study
    scale = scale_shown(st, counts)
    mine = study_runs.db_records(st, scale, db)
    side, skipped = report.collect(st, scale, mine)
    players = study_mod.players(st, scale, study.catalog)
    table = report.rows(st, side, players)
    findings = (
        report.charset_findings(st, table, side, players) if "charset" in st.comparisons else []
    )
    return {
        "name": study.name,
        "title": st.title,
        "scale": scale,
        "local_notes": st.local_notes if scale != "full" else "",
        "roles": [
            {"role": r, "article": st.roles[r]["article"], "server": st.server(r, scale)}
            for r in st.role_names
        ],
        "players": report.role_lines(players),
        "rule": report.RULE,
        "rows": [_row(r) for r in table],
        "claims": [*findings, *(c.line() for c in report.claim_checks(st, table))],
        "skipped": skipped,
        "reference_rows": len(side.article),
    }


def scale_shown(study: study_mod.Study, counts: dict[str, int]) -> str:
    """The scale whose servers have the most cells (`full` wins a tie)."""
    cells = {sc: sum(counts.get(sid, 0) for sid in set(study.servers(sc))) for sc in study.scales}
    return max(cells, key=lambda k: (cells[k], k == "full"))


def _row(row: report.ReportRow) -> dict[str, Any]:
    ci = row.interval
    return {
        "comparison": row.comparison,
        "cells": row.label,
        "ours": row.ours,
        "ci_low": ci.ci_low if ci else None,
        "ci_high": ci.ci_high if ci else None,
        "p": ci.p_value if ci else None,
        "n": f"{row.n[0]}/{row.n[1]}",
        "sure": row.sure,
        "article": row.article,
        "grade": row.grade.text,
        "graded": row.grade.graded,
    }


def servers(studies: list[StudyPage]) -> list[str]:
    """Every server id any study names (the cells the site counts for the pages)."""
    return sorted({sid for s in studies for sc in s.study.scales for sid in s.study.servers(sc)})
