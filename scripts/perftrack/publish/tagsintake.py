"""The new-tags workflow's catalog, read as data by the job that holds the write tokens.

`new-tags.yml` splits in two: the `check` job (read-only token, no secret) asks Docker Hub
and GitHub for release tags (`perftrack tags check --write`) and digests (`perftrack
servers pin --provider docker --write`) and uploads the catalog it wrote; the `pr` job
(contents, pull-requests and actions write; the PR token) never parses a registry's
answer. It takes that catalog only if it differs from the default branch's in what those
two commands may write:

- added entries: docker, the product's official image, its digest pinned or ``unpinned``;
- changed entries: the same entry with only its digest recorded (``unpinned`` -> sha256);
- nothing removed, nothing else changed,

and derives what the pull request says (the ids added and pinned) from that comparison,
never from the check job's outputs. Anything else: one line, exit 2, no pull request.

``python -m perftrack.publish.tagsintake --catalog FILE --github-output F``
(writes ``added``, ``pinned``, ``count``, ``pin_count``; the default branch's catalog is
``configs/versions.yaml`` of the checkout).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from perftrack.core import ghoutput
from perftrack.core.errors import ConfigError
from perftrack.publish import printake
from perftrack.servers import catalog, catalog_file

EXIT_REFUSED = 2


def _official_image(entry: catalog.Entry) -> str | None:
    name = (entry.image or "").split("@", 1)[0].rsplit(":", 1)[0]
    if entry.provider != "docker" or name not in printake.OFFICIAL_IMAGES.get(entry.product, ()):
        return f"entry {entry.id!r} is not a docker entry of the official {entry.product} image"
    return None


def changes(base: catalog.Catalog, text: str) -> tuple[list[str], list[str]]:
    """(ids added, ids pinned) by the new-tags catalog ``text``; `printake.Refused` else."""
    path = base.path.with_name(".new-tags-versions.yaml")  # beside configs/releases.yaml
    try:
        path.write_text(text, encoding="utf-8")
        head = catalog.read_catalog(path)
    except ConfigError as err:
        message = str(err).replace(str(path), "the new catalog")
        message = message.replace(catalog_file.display(path), "the new catalog")
        raise printake.Refused(message) from None
    finally:
        path.unlink(missing_ok=True)
    removed = [i for i in base.ids if i not in head]
    if removed:
        raise printake.Refused(f"the new catalog removes {', '.join(removed)}")
    added, pinned = [], []
    for entry in head:
        if entry.id not in base:
            reason = _official_image(entry)
            if reason:
                raise printake.Refused(reason)
            added.append(entry.id)
            continue
        old = base.get(entry.id)
        if old == entry:
            continue
        pinned_old = dataclasses.replace(old, digest=entry.digest, unpinned=entry.unpinned)
        if not (old.unpinned and not entry.unpinned and pinned_old == entry):
            raise printake.Refused(
                f"entry {entry.id!r} changed beyond its digest being recorded (new-tags "
                "only adds official images and records digests)"
            )
        pinned.append(entry.id)
    return added, pinned


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m perftrack.publish.tagsintake", description=__doc__
    )
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--github-output", type=Path)
    args = parser.parse_args(argv)
    try:
        text = args.catalog.read_text(encoding="utf-8")[: printake.MAX_CATALOG_BYTES + 1]
        if len(text.encode()) > printake.MAX_CATALOG_BYTES:
            raise printake.Refused(f"the new catalog is over {printake.MAX_CATALOG_BYTES} bytes")
        added, pinned = changes(catalog.read_catalog(), text)
    except (OSError, UnicodeDecodeError) as err:
        print(f"error: cannot read {args.catalog}: {err}", file=sys.stderr)
        return EXIT_REFUSED
    except printake.Refused as err:
        print(f"error: new-tags catalog refused: {' '.join(str(err).split())}", file=sys.stderr)
        return EXIT_REFUSED
    values = {
        "added": " ".join(added),
        "pinned": " ".join(pinned),
        "count": str(len(added)),
        "pin_count": str(len(pinned)),
    }
    ghoutput.append(args.github_output, values)
    print(
        f"new-tags catalog: added {values['added'] or 'none'}; pinned {values['pinned'] or 'none'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
