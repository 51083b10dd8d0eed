"""The night plan file (`runs/night-plan.json`): made by `perftrack plan`, read by
`perftrack run --night-plan FILE --shard K` on each runner.

The file holds the matrix, the night, the budget and estimate, one entry per shard (its
runner class, the runner labels it runs on, its cells exactly as plan.py expands them, and
its estimated seconds), the slices the budget cut, and the servers pinned while planning
(``pins``: with ``--pin-unpinned``, each docker entry the catalog marks unpinned gets its
Docker Hub digest here, trust on first use; servers/planpins.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from perftrack.core import files, paths
from perftrack.core.cell import cell_id
from perftrack.core.errors import ConfigError
from perftrack.planning import cells as plan
from perftrack.planning import dispatch, fleet, matrix, pairing, schedule
from perftrack.servers import catalog as catalog_mod
from perftrack.servers import planpins, rules

DEFAULT_OUT = Path("runs/night-plan.json")
MAX_PLAN_BYTES = 64 * 1024 * 1024
CELL_KEYS = {f.name for f in fields(plan.Cell)}


def parse_night(value: str | None) -> date:
    if value is None:
        return datetime.now(UTC).date()
    try:
        if len(value) != 10:
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        msg = f"--night {dispatch.shown(value)} is not a date: use YYYY-MM-DD"
        raise ConfigError(msg) from None


def make_night_plan(
    matrix_arg: str | None,
    *,
    budget_minutes: int | None,
    shards: int,
    db: Path,
    night: date,
    use_dispatch: bool,
    rotation_nights: int | None = None,
    env: dict[str, str] | None = None,
    pin_unpinned: bool = False,
    lookup: planpins.Lookup | None = None,
) -> schedule.NightPlan:
    """Read the matrix (or the dispatch inputs), the fleet and the DB; plan the night.

    With ``pin_unpinned``, the selected docker entries marked unpinned are pinned from
    Docker Hub first (``lookup``: a test's stand-in for it), or skipped with the reason."""
    cfg = paths.config_dir()
    cat = catalog_mod.read_catalog()
    if use_dispatch:
        inputs = dispatch.from_env(dict(os.environ) if env is None else env, cat, cfg, matrix_arg)
        m = inputs.matrix
        budget_minutes = inputs.budget_minutes or budget_minutes
        shards = inputs.shards or shards
    else:
        m = matrix.read_matrix(paths.matrix_path(matrix_arg or dispatch.DEFAULT_MATRIX))
    fl = fleet.read_fleet(cfg)
    wanted = (*m.servers, *([fl.control_server] if fl.control_server else []))
    for sid in wanted:
        cat.get(sid)
    night_pins = planpins.NightPins()
    if pin_unpinned:
        runnable = [e for e in map(cat.get, wanted) if not _unsupported(e)]
        night_pins = planpins.pin_for_night(runnable, lookup)
        cat = planpins.apply(cat, planpins.digests(night_pins.pins))
    m, skipped = without_unrunnable(m, cat, night_pins.skipped)

    def info(sid: str) -> tuple[str, str]:
        e = cat.get(sid)
        return e.product, e.version

    history = schedule.read_history(db)
    p = schedule.make_schedule(
        m,
        info,
        fl,
        history,
        night=night,
        budget_minutes=budget_minutes,
        shards=shards,
        rotation_nights=rotation_nights,
    )
    p.notes[:0] = [
        *m.selection_notes,
        *(f"skipped {sid}: {reason}" for sid, reason in skipped),
    ]
    planned = {c.server_id for sh in p.shards for sl in sh.slices for _, c in sl.cells}
    p.pins = {sid: pp.to_dict() for sid, pp in night_pins.pins.items() if sid in planned}
    return p


def _unsupported(entry: catalog_mod.Entry) -> str | None:
    return rules.rules_for(entry.product, entry.version).unsupported


def without_unrunnable(
    matrix_spec: matrix.Matrix, cat: catalog_mod.Catalog, reasons: dict[str, str] | None = None
) -> tuple[matrix.Matrix, list[tuple[str, str]]]:
    """The matrix without servers that cannot run tonight (not yet pinned, a release
    perftrack cannot run), and those servers with the reason (``reasons``: the plan's own,
    e.g. why it could not pin one); an error if none is left."""
    skipped: list[tuple[str, str]] = []
    for sid in matrix_spec.servers:
        e = cat.get(sid)
        reason = (reasons or {}).get(sid) or e.skip_reason() or _unsupported(e)
        if reason:
            skipped.append((sid, reason))
    if len(skipped) == len(matrix_spec.servers):
        why = "; ".join(f"{sid}: {reason}" for sid, reason in skipped)
        raise ConfigError(f"matrix {matrix_spec.name}: none of its servers can run ({why})")
    gone = {sid for sid, _ in skipped}
    keep = tuple(s for s in matrix_spec.servers if s not in gone)
    return replace(
        matrix_spec, servers=keep
    ), skipped  # selection kept whole: render marks the skipped


def write(night_plan: schedule.NightPlan, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    files.replace_text(out, json.dumps(night_plan.to_dict(), indent=1, sort_keys=True) + "\n")


def _mins(secs: float) -> str:
    return f"{secs / 60:.1f} min"


def render(night_plan: schedule.NightPlan, emit: Callable[[str], None]) -> None:
    """The plan in words: totals first (before anything runs), then shards and cuts."""
    d = night_plan.to_dict()
    n_cells = sum(len(sh["cells"]) for sh in d["shards"])
    all_cells = sum(len(s.cells) for s in night_plan.chosen) + sum(
        len(s.cells) for s in night_plan.cut
    )
    budget = (
        f"budget {night_plan.budget_minutes} min per shard"
        if night_plan.budget_minutes
        else "no budget (all runs)"
    )
    emit(
        f"night {d['night']} · matrix {night_plan.matrix.name} · {budget} · "
        f"{len(night_plan.shards)} shard(s) · "
        f"history: {night_plan.history_source}"
    )
    emit(
        f"estimate: whole matrix {_mins(night_plan.estimate_all_s)} machine time; tonight "
        f"{n_cells} cells, {_mins(night_plan.estimate_s)} "
        f"(estimates: {', '.join(f'{n} {k}' for k, n in sorted(night_plan.sources.items()))})"
    )
    emit(
        f"rotation: {night_plan.rotation_nights} night(s) cover the matrix; tonight is part "
        f"{night_plan.rotation_part}; {night_plan.deferred_cells} cells of later parts deferred"
    )
    if night_plan.matrix.selection:
        emit(f"servers ({len(night_plan.matrix.selection)}, chosen by the matrix's rules):")
        for c in night_plan.matrix.selection:
            state = "" if c.server_id in night_plan.matrix.servers else "  [SKIPPED, see below]"
            emit(f"  {c.server_id:<22} {c.line or '-':<18} {c.rule}: {c.why}{state}")
    else:
        emit(f"servers: {', '.join(night_plan.matrix.servers)}")
    for sid, pin in night_plan.pins.items():
        emit(f"pinned tonight: {sid} {pin['image']} = {pin['digest']} (trust on first use)")
    by_prio = ", ".join(f"{n} {k}" for k, n in d["cells_by_priority"].items())
    emit(f"tonight by priority: {by_prio or 'nothing'}")
    for sh in d["shards"]:
        emit(
            f"  shard {sh['shard']}: {sh['runner_class']} [{', '.join(sh['runs_on'])}] "
            f"{len(sh['cells'])} cells, {_mins(sh['estimate_s'])}"
        )
    emit(pairing_line(night_plan))
    for pair in night_plan.split_pairs:
        emit(f"  split: {pair}")
    if night_plan.cut:
        cut_cells = sum(len(s.cells) for s in night_plan.cut)
        emit(
            f"cut by the budget: {cut_cells} of {all_cells} wanted cells "
            f"({len(night_plan.cut)} slices):"
        )
        for s in night_plan.cut:
            x = s.describe()
            emit(
                f"  {x['server_id']} {x['workload']} t={x['threads']} {x['collation']} "
                f"{x['profile']}: {x['cells']} cells, {_mins(x['estimate_s'])} ({x['reason']})"
            )
    for note in night_plan.notes:
        emit(f"note: {note}")


def pairing_line(night_plan: schedule.NightPlan) -> str:
    """What the sharding kept together (planning/pairing.py), in one line."""
    kept = f"pairing: {night_plan.comparison_groups} comparison group(s); {pairing.RULE}"
    if not night_plan.split_pairs:
        return kept + ", so every pair tonight is measured on one machine"
    return kept + f", except {len(night_plan.split_pairs)} pair(s) split by the budget:"


def summary_markdown(night_plan: schedule.NightPlan) -> str:
    d = night_plan.to_dict()
    lines = [
        f"### Night plan {d['night']}: {dispatch.markdown_text(night_plan.matrix.name)}",
        "",
        f"Estimate tonight {_mins(night_plan.estimate_s)} over {len(night_plan.shards)} "
        "shard(s); whole "
        f"matrix {_mins(night_plan.estimate_all_s)}; rotation part {night_plan.rotation_part} of "
        f"{night_plan.rotation_nights}; {len(night_plan.cut)} slice(s) cut by the budget.",
        "",
        "| shard | runner class | cells | estimate |",
        "|---|---|---|---|",
        *(
            f"| {sh['shard']} | {sh['runner_class']} | {len(sh['cells'])} | "
            f"{_mins(sh['estimate_s'])} |"
            for sh in d["shards"]
        ),
        "",
        dispatch.markdown_text(pairing_line(night_plan).rstrip(":") + "."),
        "",
    ]
    if night_plan.pins:
        lines += [
            "Pinned while planning (trust on first use; the catalog change is proposed "
            "after publishing):",
            "",
            *(
                f"- {dispatch.markdown_text(sid)}: {dispatch.markdown_text(pin['image'])} "
                f"`{pin['digest']}`"
                for sid, pin in night_plan.pins.items()
            ),
            "",
        ]
    skipped = [n for n in night_plan.notes if n.startswith("skipped ")]
    if skipped:
        lines += [*(f"- {dispatch.markdown_text(n)}" for n in skipped), ""]
    return "\n".join(lines)


# --- reading a shard back ---------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class ShardWork:
    cells: list[plan.Cell]
    runner_class: str
    matrix_spec: dict[str, Any]
    source: dict[str, Any]  # night, shard, file: recorded in the run's plan.json
    # the plan's pins of this shard's servers (PlanPin.to_dict), kept in the run's plan.json
    pins: dict[str, dict[str, str]]


def _bad(path: Path, what: str) -> ConfigError:
    return ConfigError(f"{path}: {what}; make it again with `perftrack plan`")


def read(path: Path) -> dict[str, Any]:
    """A night plan file as written by `write`: its schema checked, nothing else."""
    try:
        if path.stat().st_size > MAX_PLAN_BYTES:
            raise _bad(path, "too large for a night plan")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such night plan; run `perftrack plan` first") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"not a night plan ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != schedule.SCHEMA:
        raise _bad(path, f"not a night plan (schema is not {schedule.SCHEMA})")
    return data


def pins(path: Path) -> dict[str, planpins.PlanPin]:
    """The servers a night plan pinned while planning (none for an older plan)."""
    return planpins.parse(read(path).get("pins"), path)


def load_shard(path: Path, shard: int, cat: catalog_mod.Catalog) -> ShardWork:
    data = read(path)
    shards = data.get("shards")
    if not isinstance(shards, list):
        raise _bad(path, "has no shard list")
    ids = [s.get("shard") for s in shards if isinstance(s, dict)]
    if shard not in ids:
        raise ConfigError(
            f"{path}: no shard {shard}; the plan has shards {', '.join(map(str, ids)) or 'none'}"
        )
    entry = shards[ids.index(shard)]
    rc = entry.get("runner_class")
    if not isinstance(rc, str) or not matrix.NAME_RE.match(rc):
        raise _bad(path, f"shard {shard} has no valid runner_class")
    raw_cells = entry.get("cells")
    if not isinstance(raw_cells, list) or not raw_cells:
        raise _bad(path, f"shard {shard} has no cells")
    cells = []
    for i, raw in enumerate(raw_cells):
        if not isinstance(raw, dict) or set(raw) != CELL_KEYS:
            raise _bad(path, f"shard {shard} cell #{i + 1} does not have the cell fields")
        c = plan.Cell.from_dict(raw)
        if cell_id(raw) != c.cell_id:
            raise _bad(path, f"shard {shard} cell #{i + 1}: cell_id does not match its fields")
        cat.get(c.server_id)
        cells.append(c)
    spec = data.get("matrix_spec") if isinstance(data.get("matrix_spec"), dict) else {}
    ours = {c.server_id for c in cells}
    pinned = {s: p for s, p in planpins.parse(data.get("pins"), path).items() if s in ours}
    planpins.apply(cat, planpins.digests(pinned))  # a stale plan fails here, before any run
    return ShardWork(
        cells=cells,
        runner_class=rc,
        matrix_spec=spec,
        source={"file": str(path), "night": data.get("night"), "shard": shard},
        pins={s: p.to_dict() for s, p in pinned.items()},
    )
