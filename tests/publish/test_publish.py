"""`perftrack publish`: ingest + detect + commit + push, and the push-race retry.

Real git (clones of a local bare repository) and real DuckDB files; the records are the
synthetic fixtures (tests/fixtures/records/synthetic.py), written to tmp paths only.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from fixtures.records.synthetic import SYNTHETIC_START, make_record
from gitrepo import GIT_ENV, git
from perftrack import cli
from perftrack.core import record
from perftrack.core.errors import ConfigError
from perftrack.publish import job_summary as summary
from perftrack.publish import publish
from perftrack.store import store

REPO = Path(__file__).resolve().parents[2]
PERFTRACK = [sys.executable, "-c", "import sys; from perftrack.cli import main; sys.exit(main())"]
DB = Path("data") / "results.duckdb"


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(REPO / "configs"))


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare repository with one commit on main (a README and an empty data/)."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "--quiet", str(bare), str(seed))
    (seed / "README.md").write_text("perftrack publish test\n")
    (seed / "data").mkdir()
    (seed / "data" / ".gitkeep").write_text("")
    git(seed, "add", ".")
    git(seed, "commit", "--quiet", "-m", "seed")
    git(seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
    return bare


def clone(remote: Path, where: Path) -> Path:
    git(remote.parent, "clone", "--quiet", "--branch", "main", str(remote), str(where))
    return where


def night(tmp: Path, n: int, cells: int = 4) -> Path:
    """One night's records: two versions, `cells` cells each, run id synthetic-night-N."""
    out = tmp / f"night-{n}"
    start = SYNTHETIC_START + timedelta(days=n)
    for c in range(cells):
        for i, (sid, ver, tps) in enumerate(
            (
                ("synthetic-mysql-8.0.36", "8.0.36", 1000.0),
                ("synthetic-mysql-8.4.0", "8.4.0", 950.0),
            )
        ):
            rec = make_record(
                run_id=f"synthetic-night-{n}",
                cell=100 * n + 10 * i + c,
                server_id=sid,
                version=ver,
                tps=tps + n + c,
                started_at=start + timedelta(minutes=2 * c + i),
            )
            record.write(rec, out / "records")
    return out


def db_rows(db: Path) -> tuple[int, int, list[str]]:
    with store.open_db(db, write=False) as st:  # verifies every night file it lists
        assert st.check() == []
        total, distinct = st.con.execute(
            "SELECT count(*), count(DISTINCT record_id) FROM results"
        ).fetchone()
        runs = [r for (r,) in st.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    return total, distinct, runs


def remote_db(remote: Path, tmp: Path) -> Path:
    check = clone(remote, tmp / "check")
    return check / DB


def test_publish_commits_and_pushes_a_night(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    res = publish.publish([night(tmp_path, 1)], db=a / DB, pause=lambda _s: None)
    assert res.pushed and res.attempts == 1 and res.added == 8
    assert git(remote, "rev-parse", "main") == res.commit
    assert db_rows(remote_db(remote, tmp_path)) == (8, 8, ["synthetic-night-1"])
    assert not (a / "data" / "results.duckdb.wal").exists()  # CHECKPOINT before commit


def test_push_race_in_the_racing_order_keeps_both_nights(remote: Path, tmp_path: Path) -> None:
    """B cloned before A pushed: B's first push is rejected, B takes A's DB and re-ingests."""
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    ra = publish.publish([night(tmp_path, 1)], db=a / DB, pause=lambda _s: None)
    said: list[str] = []
    rb = publish.publish([night(tmp_path, 2)], db=b / DB, pause=lambda _s: None, say=said.append)
    assert ra.pushed and rb.pushed
    assert rb.attempts == 2, said
    assert any("push rejected" in line for line in said)
    total, distinct, runs = db_rows(remote_db(remote, tmp_path))
    assert (total, distinct) == (16, 16)  # none lost, none duplicated
    assert runs == ["synthetic-night-1", "synthetic-night-2"]
    # history is linear: B's commit sits on A's, nothing was merged
    log = git(remote, "log", "--format=%s", "main").splitlines()
    assert len(log) == 3 and "synthetic-night-2" in log[0] and "synthetic-night-1" in log[1]
    # every night file was added once and never changed or deleted afterwards
    status = git(remote, "log", "--format=", "--name-status", "main", "--", "data/results")
    kinds = {line.split("\t")[0] for line in status.splitlines() if line}
    assert kinds == {"A"}, status


def test_two_publish_processes_racing_concurrently(remote: Path, tmp_path: Path) -> None:
    """Two `perftrack publish` processes started together: both nights land exactly once."""
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    nights = [night(tmp_path, 1), night(tmp_path, 2)]
    procs = [
        subprocess.Popen(
            [*PERFTRACK, "publish", str(rec_dir), "--db", str(clone_dir / DB), "--attempts", "8"],
            cwd=clone_dir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for clone_dir, rec_dir in ((a, nights[0]), (b, nights[1]))
    ]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert db_rows(remote_db(remote, tmp_path)) == (
        16,
        16,
        ["synthetic-night-1", "synthetic-night-2"],
    )


def test_republishing_the_same_records_adds_nothing(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    records = night(tmp_path, 1)
    first = publish.publish([records], db=a / DB)
    again = publish.publish([records], db=a / DB)
    assert first.pushed and not again.pushed and again.commit is None and again.added == 0
    assert git(remote, "rev-parse", "main") == first.commit


def test_race_lost_every_time_fails_with_a_clear_error(remote: Path, tmp_path: Path) -> None:
    """A pre-push hook lets another clone publish first, before every push of B."""
    b = clone(remote, tmp_path / "b")
    rival = clone(remote, tmp_path / "rival")
    hook = b / ".git" / "hooks" / "pre-push"
    hook.write_text(
        "#!/bin/sh\n"
        f'cd "{rival}" && git pull --quiet --ff-only origin main && '
        "date +%s%N >> rival.txt && git add rival.txt && git commit --quiet -m rival && "
        "git push --quiet origin HEAD:refs/heads/main\n"
    )
    hook.chmod(0o755)
    with pytest.raises(publish.PushError, match="lost the race 3 times") as exc:
        publish.publish([night(tmp_path, 1)], db=b / DB, attempts=3, pause=lambda _s: None)
    assert "\n" not in str(exc.value)
    # nothing of B's reached the remote; the rival's commits did
    assert "synthetic-night" not in git(remote, "log", "--format=%s", "main")


def test_push_refused_for_another_reason_is_not_retried(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    git(a, "remote", "set-url", "origin", str(tmp_path / "no-such-remote.git"))
    with pytest.raises(publish.PushError, match="git push to origin main failed") as exc:
        publish.publish([night(tmp_path, 1)], db=a / DB, pause=lambda _s: None)
    assert "lost the race" not in str(exc.value)


def test_bad_record_fails_before_anything_is_written(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    records = night(tmp_path, 1)
    bad = next((records / "records").glob("*.json"))
    bad.write_text('{"schema": "nonsense"}')
    with pytest.raises(Exception, match=bad.name):
        publish.publish([records], db=a / DB)
    assert not (a / DB).exists()
    assert git(a, "status", "--porcelain") == ""


def test_a_shard_with_a_bad_record_is_held_back_and_the_others_publish(
    remote: Path, tmp_path: Path
) -> None:
    """The nightly's --hold-back-bad: one shard's broken record costs that shard, not the
    night; the held-back batch is named with its file and reason, and is never ingested."""
    a = clone(remote, tmp_path / "a")
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    for n in (1, 2):
        (night(tmp_path, n) / "records").rename(incoming / f"records-shard-{n}")
    bad = next((incoming / "records-shard-2").glob("*.json"))
    bad.write_text('{"schema": "nonsense"}')
    lines: list[str] = []
    res = publish.publish([incoming], db=a / DB, push=False, say=lines.append, hold_back_bad=True)
    assert res.run_ids == ["synthetic-night-1"] and res.commit is not None
    (held,) = res.held_back
    assert held.batch == incoming / "records-shard-2" and held.files == 8
    assert bad.name in held.reason
    assert any(ln.startswith("held back ") and bad.name in ln for ln in lines), lines
    with store.open_db(a / DB, write=False) as st:
        runs = st.con.execute("SELECT DISTINCT run_id FROM results").fetchall()
    assert runs == [("synthetic-night-1",)]
    # without the flag (a person's publish), the same bad record stops everything
    b = clone(remote, tmp_path / "b")
    with pytest.raises(Exception, match=bad.name):
        publish.publish([incoming], db=b / DB, push=False)
    assert not (b / DB).exists()


def test_db_outside_a_git_work_tree_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConfigError, match="not inside a git work tree"):
        publish.publish([night(tmp_path, 1)], db=tmp_path / "plain" / "results.duckdb")


def test_summary_lists_missing_shards_and_verdicts(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    records = night(tmp_path, 1)
    res = publish.publish([records], db=a / DB, push=False)
    arrived = sorted({record.read(p)["cell_id"] for p in (records / "records").glob("*.json")})
    plan = {
        "shards": [
            {"shard": 0, "runner_class": "synthetic", "cells": [{"cell_id": c} for c in arrived]},
            {"shard": 1, "runner_class": "synthetic", "cells": [{"cell_id": "f" * 16}]},
        ]
    }
    md = summary.markdown(a / DB, res.run_ids, headline="night 1", plan=plan, chart="x.png")
    assert "| 0 | synthetic | 8 | 8 | complete |" in md
    assert "| 1 | synthetic | 1 | 0 | **missing**" in md
    assert "never as zero" in md
    assert "synthetic-mysql-8.0.36 → synthetic-mysql-8.4.0" in md
    assert "![throughput trend](x.png)" in md
    assert "synthetic-mysql-8.4.0 | 4 / 4 | 0.950 |" in md  # n per side
    with store.open_db(a / DB, write=False) as st:
        assert st.verdict_rounds(summary.METRIC)  # what the rows below read
    # an inconclusive row says how many rounds a side would decide it (stored by detect)
    v = {"verdict_id": "x", "verdict": "inconclusive", "workload": "w", "threads": 1,
         "collation": "c", "profile": "p", "runner_class": "r", "base_server": "a",
         "new_server": "b", "n_base": 2, "n_new": 2, "ratio": 0.97, "ci_low": 0.8,
         "ci_high": 1.2, "threshold": 0.05, "paired": False, "rounds_needed": 29}  # fmt: skip
    (row,) = [ln for ln in summary._verdict_lines([v], {}, set()) if ln.startswith("| w |")]
    assert row.endswith("| inconclusive (~29 rounds a side would decide) |"), row


def test_cli_publish_writes_the_summary(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    out = tmp_path / "summary.md"
    p = subprocess.run(
        [
            *PERFTRACK,
            "publish",
            str(night(tmp_path, 1)),
            "--db",
            str(a / DB),
            "--summary",
            str(out),
        ],
        cwd=a,
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert "8 new; pushed as" in out.read_text()
    bad = subprocess.run(
        [*PERFTRACK, "publish", str(tmp_path / "nothing-here"), "--db", str(a / DB)],
        cwd=a,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: no such file or directory")
    assert len(bad.stderr.strip().splitlines()) == 1


def test_no_records_arrived_publishes_nothing_and_says_all_missing(
    remote: Path, tmp_path: Path
) -> None:
    """Every shard failed before uploading: no commit, no DB created, all shards missing."""
    a = clone(remote, tmp_path / "a")
    empty = tmp_path / "incoming"
    empty.mkdir()
    before = git(remote, "rev-parse", "main")
    res = publish.publish([empty], db=a / DB)
    assert (res.records, res.commit, res.pushed) == (0, None, False)
    assert git(remote, "rev-parse", "main") == before and not (a / DB).exists()
    plan = {"shards": [{"shard": 0, "runner_class": "x", "cells": [{"cell_id": "a" * 16}]}]}
    md = summary.markdown(a / DB, res.run_ids, headline="nothing", plan=plan)
    assert "| 0 | x | 1 | 0 | **missing**" in md


def test_token_reaches_git_only_through_the_environment(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    g = publish.Git(a, token="secret-token-value")
    keys = {g.env[f"GIT_CONFIG_KEY_{i}"] for i in range(int(g.env["GIT_CONFIG_COUNT"]))}
    assert "http.https://github.com/.extraheader" in keys
    # git sees it (as an HTTP header for github.com only), nothing is written to disk
    assert "AUTHORIZATION: basic " in g.config("http.https://github.com/.extraheader")
    assert "extraheader" not in (a / ".git" / "config").read_text()


def changes(repo: Path) -> list[str]:
    """`git status` lines, without the store's lock file and read cache (both gitignored in
    the project: `detect` keeps its answers in the cache, store/files/answers.py)."""
    return [
        line
        for line in git(repo, "status", "--porcelain").splitlines()
        if ".lock" not in line and "-cache/" not in line
    ]


def test_a_file_over_the_limit_is_refused_before_any_commit(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    first = publish.publish([night(tmp_path, 1)], db=a / DB, pause=lambda _s: None)
    head = git(a, "rev-parse", "HEAD")
    size = (a / DB).stat().st_size
    with pytest.raises(publish.TooLarge) as exc:
        publish.publish(
            [night(tmp_path, 2)], db=a / DB, pause=lambda _s: None, max_file_mb=size / 2e6
        )
    msg = str(exc.value)
    assert msg.startswith(f"{DB} would be ") and "MB limit" in msg and "\n" not in msg
    # nothing committed, nothing pushed, the DB file as the branch has it
    assert git(a, "rev-parse", "HEAD") == head == git(remote, "rev-parse", "main")
    assert changes(a) == []
    assert db_rows(a / DB)[2] == ["synthetic-night-1"] and first.pushed


def test_a_night_far_over_the_growth_budget_is_refused(remote: Path, tmp_path: Path) -> None:
    """The growth guard (issue 39) on a synthetic night: with a budget far below what its
    night file weighs, the night is refused in one line naming it, nothing committed."""
    assert publish.growth_limit(3960) == 810_000 == publish.growth_limit(10)
    assert publish.growth_limit(7920) == 1_620_000
    a = clone(remote, tmp_path / "a")
    publish.publish([night(tmp_path, 1)], db=a / DB, pause=lambda _s: None)
    head = git(a, "rev-parse", "HEAD")
    with pytest.raises(publish.TooLarge) as exc:
        publish.publish(
            [night(tmp_path, 2)], db=a / DB, pause=lambda _s: None, growth_budget_kb=0.001
        )
    msg = str(exc.value)
    assert msg.startswith("the night (") and ".results.parquet" in msg, msg
    assert "over the growth limit of 0.0 KB" in msg and "\n" not in msg
    assert git(a, "rev-parse", "HEAD") == head == git(remote, "rev-parse", "main")
    assert changes(a) == []
    # the default budget takes the same night
    assert publish.publish([night(tmp_path, 2)], db=a / DB, pause=lambda _s: None).pushed


def test_publish_archives_the_records_with_the_night_replayed(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`publish --archive` against a replayed GitHub API: the month's asset uploaded and
    the manifest committed in the same commit as the night's DB and files."""
    from replay import Replay

    a = clone(remote, tmp_path / "a")
    with Replay() as r:
        monkeypatch.setenv("PERFTRACK_GITHUB_API_URL", r.url)
        monkeypatch.setenv("GITHUB_REPOSITORY", "synthetic/perftrack")
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_test-token")
        monkeypatch.chdir(a)
        rc = cli.main(["publish", str(night(tmp_path, 1)), "--db", str(a / DB), "--archive"])
        assert rc == 0
        (entry,) = json.loads((a / "data/archive/manifest.json").read_text())["months"]
        rel = r.releases[entry["tag"]]
        (blob,) = [r.assets[i][1] for i in rel["assets"]]
    assert entry["records"] == 8 and hashlib.sha256(blob).hexdigest() == entry["sha256"]
    committed = git(a, "show", "--name-only", "--format=", "HEAD").split()
    assert "data/archive/manifest.json" in committed and str(DB) in committed
    assert git(a, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    assert changes(a) == []


def test_the_cli_names_the_limit_and_exits_3(remote: Path, tmp_path: Path, capsys) -> None:
    a = clone(remote, tmp_path / "a")
    rc = cli.main(
        ["publish", str(night(tmp_path, 1)), "--db", str(a / DB), "--max-file-mb", "0.001"]
    )
    err = capsys.readouterr().err
    assert rc == 3 and "over the 0.001 MB limit" in err and len(err.strip().splitlines()) == 1
    assert not (a / DB).exists() and changes(a) == []
    assert (
        cli.main(["publish", str(night(tmp_path, 1)), "--db", str(a / DB), "--max-file-mb", "0"])
        == 2
    )


def test_summary_reports_an_alert_once_across_nights(remote: Path, tmp_path: Path) -> None:
    """The Nyrkiö bug: a change reported on one night must not come back as new on the
    next nights (analysis/alerts.py)."""
    a = clone(remote, tmp_path / "a")
    res1 = publish.publish([night(tmp_path, 1)], db=a / DB, push=False)
    md1 = summary.markdown(a / DB, res1.run_ids, headline="night 1")
    res2 = publish.publish([night(tmp_path, 2)], db=a / DB, push=False)
    md2 = summary.markdown(a / DB, res2.run_ids, headline="night 2")
    pair = "synthetic-mysql-8.0.36 → synthetic-mysql-8.4.0"
    assert "**New alerts tonight: 1**" in md1 and f"| {pair} | oltp_read_write |" in md1
    assert "🔴 regression (new)" in md1
    assert "**New alerts tonight: 0**" in md2 and "🔴" not in md2
    assert "1 open alert(s) reported on earlier nights are not repeated here" in md2
    assert "| regression (reported 20" in md2


def test_republishing_a_night_does_not_report_its_alerts_again(
    remote: Path, tmp_path: Path
) -> None:
    a = clone(remote, tmp_path / "a")
    records = night(tmp_path, 1)
    publish.publish([records], db=a / DB, push=False)
    again = publish.publish([records], db=a / DB, push=False)  # a re-run: nothing added
    assert again.added == 0
    md = summary.markdown(a / DB, again.run_ids, headline="re-run", detected=again.added > 0)
    assert "**New alerts tonight: 0**" in md and "🔴" not in md
    assert "1 open alert(s) reported on earlier nights" in md
