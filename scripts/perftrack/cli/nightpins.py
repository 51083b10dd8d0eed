"""`perftrack servers pin --from-night PLAN --records DIR…`: the night's first-night pins
as a catalog change (the nightly's pins job; servers/planpins.py)."""

from __future__ import annotations

from pathlib import Path

from perftrack.cli.app import emit
from perftrack.core import ghoutput, record
from perftrack.core.errors import ConfigError
from perftrack.planning import nightplan
from perftrack.servers import catalog, pin, planpins


def pin_from_night(
    plan_file: Path, sources: list[Path], write: bool, github_output: Path | None
) -> None:
    """Propose (and with ``write`` record) the digests the night plan pinned that the
    night's run records used; no registry is asked."""
    if not sources:
        raise ConfigError("--from-night needs the night's run records: give --records DIR")
    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise ConfigError(f"--records {missing[0]}: no such file or directory")
    plan_pins = nightplan.pins(plan_file)
    records = [record.read(p) for p in record.find(sources)]
    cat = catalog.read_catalog()
    outcome = planpins.propose(plan_pins, planpins.used_digests(records), cat)
    if not plan_pins:
        emit(f"nothing to propose: {plan_file} pinned no server while planning")
    for p in outcome.pins:
        image = plan_pins[p.server_id].image
        emit(f"{p.server_id}: digest {p.value} ({image}, pinned when the night was planned)")
    for sid, why in outcome.left:
        emit(f"{sid}: not proposed: {why}")
    if write:
        pin.write(cat.path, outcome.pins)
        if outcome.pins:
            emit(f"wrote {len(outcome.pins)} pin(s) to {cat.path}")
    ids = [p.server_id for p in outcome.pins]
    ghoutput.append(github_output, {"pinned": " ".join(ids), "pin_count": str(len(ids))})
