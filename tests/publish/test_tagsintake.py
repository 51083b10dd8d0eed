"""perftrack.publish.tagsintake: the new-tags job that holds the write tokens takes the
check job's catalog only when it adds official images and records digests, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from perftrack.publish import printake, tagsintake
from perftrack.servers import catalog

BASE = catalog.read_catalog()
TEXT = BASE.path.read_text()
LINE = (
    '  - {id: mysql-8.4.3, product: mysql, version: 8.4.3, provider: docker, image: "mysql:8.4.3",'
    " digest: unpinned}\n"
)
DIGEST = "sha256:" + "84" * 32


def test_added_official_images_and_recorded_digests_are_taken() -> None:
    assert LINE in TEXT
    text = TEXT.replace(LINE, LINE.replace("digest: unpinned", f'digest: "{DIGEST}"'))
    text += (
        "  - {id: mysql-27.1.0, product: mysql, version: 27.1.0, provider: docker,"
        f' image: "mysql:27.1.0", digest: "{"sha256:" + "27" * 32}"}}\n'
    )
    assert tagsintake.changes(BASE, text) == (["mysql-27.1.0"], ["mysql-8.4.3"])
    assert tagsintake.changes(BASE, TEXT) == ([], [])


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (  # an image of someone else's
            lambda t: (
                t + "  - {id: mysql-27.1.0, product: mysql, version: 27.1.0,"
                ' provider: docker, image: "mallory/mysql:27.1.0", digest: unpinned}\n'
            ),
            "not a docker entry of the official mysql image",
        ),
        (  # more than its digest: options of the registry's choosing
            lambda t: t.replace(
                'image: "mysql:8.4.3", digest: unpinned',
                f'image: "mysql:8.4.3", digest: "{DIGEST}", server_options: [sync_binlog=0]',
            ),
            "changed beyond its digest",
        ),
        (lambda t: t.replace(LINE, ""), "removes mysql-8.4.3"),
        (lambda t: t + "  - {id: x, product: mysql}\n", "the new catalog"),
    ],
)
def test_anything_else_is_refused(change, complaint: str) -> None:
    with pytest.raises(printake.Refused, match=complaint):
        tagsintake.changes(BASE, change(TEXT))


def test_main_writes_what_the_pr_says_or_refuses_in_one_line(tmp_path: Path, capsys) -> None:
    new, out = tmp_path / "versions.yaml", tmp_path / "out"
    new.write_text(TEXT.replace(LINE, LINE.replace("digest: unpinned", f'digest: "{DIGEST}"')))
    assert tagsintake.main(["--catalog", str(new), "--github-output", str(out)]) == 0
    assert "pinned=mysql-8.4.3" in out.read_text() and "count=0" in out.read_text()
    new.write_text(TEXT.replace(LINE, ""))
    assert tagsintake.main(["--catalog", str(new)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: new-tags catalog refused: the new catalog removes mysql-8.4.3")
    assert err.count("\n") == 1
