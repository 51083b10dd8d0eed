"""First-night pins: a docker entry the catalog marks ``digest: unpinned``, pinned when the
night is planned (trust on first use), so a new MySQL release is benchmarked from its
first night instead of after the catalog change that pins it.

The flow, one direction:

1. `perftrack plan --pin-unpinned` (the nightly's plan job, on a GitHub-hosted runner that
   reaches Docker Hub) asks Docker Hub for the digest of each selected unpinned docker
   entry, twice (`pin_for_night`). The same digest twice: the server is pinned for this
   night and planned normally; the digest goes into the night plan (``pins``: per server
   its image, digest, ``pinned_by: plan``, when and from which registry). Two different
   digests (a tag that moves while we look): refused with one line, nothing planned for
   it. No answer (no network, a timeout) or no such tag: skipped with the reason, like
   any server that cannot run tonight; the rest of the night is planned. Without the
   flag nothing is asked (a laptop without network neither waits nor pins).
2. `perftrack run --night-plan` applies the plan's pins to the catalog it runs from
   (`apply`): the docker provider then verifies the image against the plan's digest
   exactly as against a catalog pin, refusing a mismatch before anything runs, and every
   run record of the server carries ``server.digest`` and ``server.pinned_by: plan``.
3. `perftrack servers pin --from-night PLAN --records DIR` (the nightly's pins job, after
   publish) proposes the night's pins that its records used (`propose`): the catalog
   change is written by `servers.pin.write` and opened as a pull request by
   scripts/new-tags-pr.sh, as the new-tags workflow does with `servers pin`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError, PerftrackError
from perftrack.servers import pin
from perftrack.servers.catalog import ID_RE, IMAGE_DIGEST_RE, Catalog, Entry

PINNED_BY_PLAN = "plan"
PINNED_BY_CATALOG = "catalog"
# Seconds per Docker Hub request while planning: a plan job must not hang on a registry
# that does not answer (`servers pin` on a runner allows docker.HUB_TIMEOUT_S).
PLAN_HUB_TIMEOUT_S = 10
PIN_KEYS = ("image", "digest", "pinned_by", "resolved_at", "registry")
MAX_PINS = 1000  # a night plan's pins: more than the catalog could hold is not a plan

# image -> its registry digest (sha256:…); raises a PerftrackError when it cannot say.
Lookup = Callable[[str], str]


@dataclass(frozen=True, kw_only=True)
class PlanPin:
    """One server pinned when the night was planned."""

    server_id: str
    image: str
    digest: str
    resolved_at: str  # RFC 3339, UTC
    registry: str  # the Docker Hub API base that answered

    def to_dict(self) -> dict[str, str]:
        return {
            "image": self.image,
            "digest": self.digest,
            "pinned_by": PINNED_BY_PLAN,
            "resolved_at": self.resolved_at,
            "registry": self.registry,
        }


@dataclass
class NightPins:
    """What planning made of the unpinned docker entries it was given."""

    pins: dict[str, PlanPin] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # server id -> one-line reason


def _hub_lookup(image: str) -> str:
    from perftrack.servers.providers import docker

    return docker.hub_digest(image, timeout_s=PLAN_HUB_TIMEOUT_S, suggest=False)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _short(digest: str) -> str:
    return digest[:19] + "…"


def pin_for_night(entries: Iterable[Entry], lookup: Lookup | None = None) -> NightPins:
    """Pin each unpinned docker entry of ``entries`` from Docker Hub, asking twice.

    Every entry ends pinned or skipped with a one-line reason; nothing raises. The first
    round asks each tag once; a registry that does not answer at all is not asked again
    (one timeout, not one per server); the second round asks each tag again and a
    different answer refuses the server."""
    from perftrack.servers.providers import docker

    ask = lookup or _hub_lookup
    registry = docker.hub_url()
    out = NightPins()
    wanted: dict[str, Entry] = {}
    for e in entries:
        if e.provider != "docker" or not e.unpinned or e.id in wanted or e.image is None:
            continue
        if not docker.is_docker_hub(e.image):
            out.skipped[e.id] = (
                f"not yet pinned: {e.image} is not on Docker Hub, so the plan cannot pin it "
                f"(run `perftrack servers pin {e.id}` where its registry is reachable)"
            )
            continue
        wanted[e.id] = e
    first: dict[str, str] = {}
    down: str | None = None
    for sid, e in wanted.items():
        if down is not None:
            out.skipped[sid] = down
            continue
        try:
            first[sid] = ask(e.image or "")
        except docker.HubUnreachable as err:
            down = out.skipped[sid] = (
                f"not yet pinned: Docker Hub did not answer while planning ({registry}: "
                f"{err.reason}); plan again where it answers, or `perftrack servers pin`"
            )
        except PerftrackError as err:
            out.skipped[sid] = f"not yet pinned: {e.image} cannot be pinned while planning ({err})"
    for sid, digest in first.items():
        image = wanted[sid].image or ""
        try:
            again = ask(image)
        except PerftrackError as err:
            out.skipped[sid] = f"not yet pinned: the second look-up of {image} failed ({err})"
            continue
        if again != digest:
            out.skipped[sid] = (
                f"refused: {registry} answered two digests for {image} while planning "
                f"({_short(digest)}, then {_short(again)}): a tag that moves is not pinned; "
                "nothing is planned for it"
            )
            continue
        out.pins[sid] = PlanPin(
            server_id=sid, image=image, digest=digest, resolved_at=_now(), registry=registry
        )
    return out


def apply(cat: Catalog, digests: Mapping[str, str]) -> Catalog:
    """``cat`` with each ``server id -> digest`` pinned by the plan (``pinned_by: plan``).

    An entry the catalog has since pinned to the same digest stays as it is; to another
    digest (or not a docker entry) is a one-line `ConfigError`: the plan is stale."""
    if not digests:
        return cat
    entries = []
    for e in cat.entries:
        digest = digests.get(e.id)
        if digest is None:
            entries.append(e)
        elif e.provider != "docker":
            raise ConfigError(f"the night plan pins {e.id}, which is not a docker entry")
        elif e.unpinned:
            entries.append(replace(e, digest=digest, unpinned=False, pinned_by=PINNED_BY_PLAN))
        elif e.digest == digest:
            entries.append(e)
        else:
            raise ConfigError(
                f"the night plan pins {e.id} to {digest}, but {cat.path} pins it to "
                f"{e.digest}: plan the night again"
            )
    for sid in digests:
        cat.get(sid)  # a pin of a server the catalog lacks: names the known ones
    return Catalog(cat.path, tuple(entries))


def parse(raw: Any, where: str | Path) -> dict[str, PlanPin]:
    """A night plan's (or run plan's) ``pins`` mapping, validated; absent means none."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or len(raw) > MAX_PINS:
        raise ConfigError(f"{where}: 'pins' is not a mapping of server ids; plan the night again")
    out: dict[str, PlanPin] = {}
    for sid, item in raw.items():
        if not isinstance(sid, str) or not ID_RE.match(sid):
            raise ConfigError(f"{where}: 'pins' has a bad server id; plan the night again")
        if not isinstance(item, dict) or set(item) != set(PIN_KEYS):
            raise ConfigError(f"{where}: pins.{sid} is not a pin ({', '.join(PIN_KEYS)})")
        if not all(isinstance(item[k], str) for k in PIN_KEYS):
            raise ConfigError(f"{where}: pins.{sid} has a value that is not text")
        if not IMAGE_DIGEST_RE.match(item["digest"]) or item["pinned_by"] != PINNED_BY_PLAN:
            raise ConfigError(
                f"{where}: pins.{sid} needs digest sha256:<64 hex digits> and pinned_by "
                f"{PINNED_BY_PLAN!r}; plan the night again"
            )
        out[sid] = PlanPin(
            server_id=sid,
            image=item["image"],
            digest=item["digest"],
            resolved_at=item["resolved_at"],
            registry=item["registry"],
        )
    return out


def digests(pins: Mapping[str, PlanPin]) -> dict[str, str]:
    return {sid: p.digest for sid, p in pins.items()}


# --- proposing the night's pins ----------------------------------------------------------


def used_digests(records: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """Server id -> the plan-pinned digests its run records carry."""
    used: dict[str, set[str]] = {}
    for rec in records:
        server = rec.get("server") or {}
        if server.get("pinned_by") == PINNED_BY_PLAN and server.get("digest"):
            used.setdefault(str(server["id"]), set()).add(str(server["digest"]))
    return used


@dataclass
class Proposal:
    pins: list[pin.Pin] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)  # (server id, why not proposed)


def propose(
    plan_pins: Mapping[str, PlanPin], used: Mapping[str, set[str]], cat: Catalog
) -> Proposal:
    """The catalog pins to propose: each pin of the night plan that the night's records
    used (and no other digest for that server), for an entry still marked unpinned.

    The plan is the authority (made by the GitHub-hosted plan job); the records, written
    on benchmark runners, only say which pins the night used."""
    out = Proposal()
    for sid, p in sorted(plan_pins.items()):
        seen = set(used.get(sid, ()))
        if not seen:
            out.left.append((sid, "no run record of the night used it"))
            continue
        if seen != {p.digest}:
            other = ", ".join(sorted(seen - {p.digest}))
            out.left.append((sid, f"its run records carry another digest ({other})"))
            continue
        if sid not in cat:
            out.left.append((sid, f"not in {cat.path} any more"))
            continue
        e = cat.get(sid)
        if e.provider != "docker":
            out.left.append((sid, f"not a docker entry in {cat.path}"))
        elif e.unpinned:
            out.pins.append(pin.Pin(sid, "digest", p.digest))
        elif e.digest == p.digest:
            out.left.append((sid, f"already pinned to it in {cat.path}"))
        else:
            out.left.append((sid, f"{cat.path} pins it to {e.digest}"))
    return out
