"""Hostile input, property-based (hypothesis): matrix files, CLI (workflow_dispatch) inputs,
server catalogs, version strings, run ids, run records, profiles, annotations and archive
contents.

Whatever the value — shell metacharacters, `${{ }}` expressions, `../` and absolute paths,
symlinks out of the extraction directory, huge numbers, empty values, unicode — the outcome
is either a value that passed validation and is safe to use, or a `PerftrackError` whose
message is one line. Never another exception (a traceback), never a process started (a
shell command built from the value), never a file written outside the work directory.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import stat
import tarfile
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from fixtures.records.mutations import leaf_paths, mutate
from fixtures.records.synthetic import make_record
from perftrack import cli
from perftrack.core import record
from perftrack.core.errors import PerftrackError
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.run.server import Server
from perftrack.servers import cache, catalog, profiles, rules
from perftrack.servers.install import Install
from perftrack.store import store

REPO = Path(__file__).resolve().parents[1]
# A file a shell would create if any value reached one: it must never exist.
CANARY = Path(tempfile.gettempdir()) / f"perftrack-hostile-canary-{os.getpid()}"
EXAMPLES = 150  # per property; a few seconds each
SLOW_EXAMPLES = 40  # properties that open a DuckDB file per example

# --- hostile values -----------------------------------------------------------------------

SHELL = [
    f"$(touch {CANARY})",
    f"`touch {CANARY}`",
    f"; touch {CANARY}",
    f"| touch {CANARY}",
    f"&& touch {CANARY} #",
    f"\ntouch {CANARY}\n",
    "$IFS$9",
    "${HOME}",
    "'\"; DROP TABLE results; --",
    "-rf",
    "--help",
    "*",
    "~root",
]
EXPRESSIONS = [
    "${{ github.event.inputs.x }}",
    "${{ secrets.GITHUB_TOKEN }}",
    "${{ toJSON(github) }}",
    "{{ 7*7 }}",
    "%(x)s",
    "{0}",
]
PATHS = [
    "../../etc/passwd",
    "/etc/passwd",
    "..",
    ".",
    "a/../../b",
    "./../x",
    "\\..\\..\\x",
    "/",
    "//server/share",
    "C:\\Windows",
    "a/b",
]
ODD_TEXT = [
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\x00",
    "\x1b[31m",
    "\u2028",
    "\u202e",
    "\ufeff",
    "é",
    "ℌ",
    "١٢.٣",  # Arabic-Indic digits: \d matches them
    "𝟙.𝟚",
    "Ａ",
    "İ",
    "x" * 5000,
]
NUMBERS = [0, -1, 1, 2**31, 2**63, -(2**63), 10**100, 0.5, 1e308, -0.0, True, False]
SPECIALS = [float("inf"), float("-inf"), float("nan")]

hostile_words = st.sampled_from(SHELL + EXPRESSIONS + PATHS + ODD_TEXT)
hostile_text = st.one_of(
    hostile_words,
    st.text(max_size=40),
    st.builds(
        lambda a, b: a + b, st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,10}"), hostile_words
    ),
    st.builds(lambda a, b: a + b, hostile_words, st.text(max_size=5)),
)
scalars = st.one_of(
    hostile_text,
    st.sampled_from(NUMBERS + SPECIALS),
    st.integers(),
    st.floats(),
    st.none(),
    st.booleans(),
)
hostile_value = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(hostile_text, scalars, max_size=3),
    st.just([]),
    st.just({}),
)


# --- the assertions every property shares ---------------------------------------------------


def assert_one_line(exc: BaseException) -> None:
    assert isinstance(exc, PerftrackError), f"{type(exc).__name__} escaped: {exc!r}"
    msg = str(exc)
    assert msg.strip(), "an error says something"
    assert len(msg.splitlines()) == 1, f"not one line: {msg!r}"


def snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@contextlib.contextmanager
def no_process_started() -> Iterator[None]:
    """Fail if the code under test starts any process (a shell, a tool) from a value."""

    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError(f"a process was started: {args!r}")

    with (
        mock.patch("subprocess.Popen", side_effect=refuse),
        mock.patch("os.system", side_effect=refuse),
        mock.patch("os.posix_spawn", side_effect=refuse),
    ):
        yield
    assert not CANARY.exists(), "a shell ran a hostile value"


def outcome(fn: Callable[[], Any]) -> tuple[Any, PerftrackError | None]:
    """(value, None) when `fn` accepts its input, (None, error) when it refuses it."""
    try:
        with no_process_started():
            return fn(), None
    except PerftrackError as exc:
        assert_one_line(exc)
        return None, exc


def safe_id(text: Any, pattern: re.Pattern[str] = matrix.NAME_RE) -> bool:
    return isinstance(text, str) and pattern.fullmatch(text) is not None


# --- matrix files ---------------------------------------------------------------------------

VALID_MATRIX: dict[str, Any] = {
    "name": "m",
    "servers": ["mariadb-10.11.18"],
    "workloads": ["oltp_point_select"],
    "charsets": ["latin1"],
    "threads": [1],
    "repeats": 1,
    "duration_s": 1,
    "warmup_s": 0,
    "tables": 1,
    "table_size": 10,
    "profile": "default",
    "connection": "tcp",
    "description": "d",
}
MATRIX_KEYS = sorted(VALID_MATRIX)


def assert_safe_matrix(m: matrix.Matrix) -> None:
    for name in (m.name, m.profile, *m.servers, *m.workloads, *m.charsets):
        assert safe_id(name), f"unsafe identifier accepted: {name!r}"
    for key, (lo, hi) in matrix.LIMITS.items():
        for v in m.threads if key == "threads" else [getattr(m, key)]:
            assert type(v) is int and lo <= v <= hi, (key, v)
    assert m.connection in ("tcp", "socket")


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    changes=st.dictionaries(
        st.one_of(st.sampled_from(MATRIX_KEYS), hostile_text), hostile_value, max_size=4
    ),
    drop=st.lists(st.sampled_from(MATRIX_KEYS), max_size=2),
)
@example(changes={"servers": ["a\n"]}, drop=[])
@example(changes={"name": "m\n"}, drop=[])
@example(changes={"profile": "default\n"}, drop=[])
@example(changes={"threads": [10**100]}, drop=[])
@example(changes={"unknown\rkey": 1}, drop=[])
def test_matrix_from_any_values_is_valid_or_one_line_error(changes, drop) -> None:
    data = {k: v for k, v in {**VALID_MATRIX, **changes}.items() if k not in drop}
    m, _ = outcome(lambda: matrix.from_dict(data))
    if m is not None:
        assert_safe_matrix(m)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=300), hostile_text.map(lambda t: f"name: {t}\n")))
def test_matrix_file_of_any_text_is_valid_or_one_line_error(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        before = snapshot(Path(tmp))
        m, _ = outcome(lambda: matrix.read_matrix(path))
        if m is not None:
            assert_safe_matrix(m)
        assert snapshot(Path(tmp)) == before, "loading a matrix writes nothing"


# --- CLI / workflow_dispatch inputs --------------------------------------------------------
# Workflows pass dispatch inputs to the CLI as `--option=value` (env → argv). A real argv
# cannot hold a NUL byte, so none is generated here.

argv_text = hostile_text.filter(lambda t: "\x00" not in t)


def run_cli(args: list[str]) -> tuple[int, str, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), no_process_started():
        rc = cli.main(args)
    return rc, out.getvalue(), err.getvalue()


def assert_cli_refused(rc: int, stderr: str) -> None:
    assert rc != 0
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in stderr


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    field=st.sampled_from(
        [
            "--workload",
            "--charset",
            "--threads",
            "--repeats",
            "--duration",
            "--warmup",
            "--tables",
            "--table-size",
            "--profile",
            "--runner-class",
            "--retries",
        ]
    ),
    value=argv_text,
)
@example(field="--threads", value=f"$(touch {CANARY})")
@example(field="--runner-class", value="x\n")
@example(field="--workload", value="oltp_point_select\n")
@example(field="--charset", value="${{ github.event.inputs.x }}")
def test_dispatch_inputs_are_refused_with_one_line(field: str, value: str) -> None:
    # A well-formed but unknown server: whatever else passes, nothing can start.
    with tempfile.TemporaryDirectory() as tmp:
        args = ["run", "--server=no-such-server", f"{field}={value}", f"--out={tmp}/runs"]
        rc, _, err = run_cli(args)
        assert_cli_refused(rc, err)
        assert not Path(tmp, "runs").exists() or snapshot(Path(tmp, "runs")) == set()


@settings(max_examples=EXAMPLES, deadline=None)
@given(server=argv_text)
@example(server="mariadb-10.11.18\n")
@example(server="../../etc")
@example(server="${{ github.event.inputs.x }}")
def test_dispatch_server_ids_are_refused_with_one_line(server: str) -> None:
    assume(server not in catalog.read_catalog(REPO / "configs" / "versions.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        rc, _, err = run_cli(["run", f"--server={server}", f"--out={tmp}"])
        assert_cli_refused(rc, err)
        assert snapshot(Path(tmp)) == set()


# --- run ids for --resume ------------------------------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None)
@given(run_id=st.one_of(hostile_text, st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,20}\n?")))
@example(run_id="abc\n")
@example(run_id="..")
@example(run_id="20260101T000000Z-abcdef/../..")
@example(run_id="\r")
def test_resume_run_id_never_leaves_the_runs_directory(run_id: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        (runs / "20260101T000000Z-abcdef").mkdir(parents=True)
        (Path(tmp) / "plan.json").write_text("{}")  # bait one level up: ../ must not reach it
        before = snapshot(Path(tmp))
        rd, err = outcome(lambda: runner.open_run(runs, run_id))
        assert rd is None and err is not None, "no run exists, so every id is refused"
        assert snapshot(Path(tmp)) == before
        if "\x00" not in run_id:
            rc, _, stderr = run_cli(["run", f"--resume={run_id}", f"--out={runs}"])
            assert_cli_refused(rc, stderr)
            assert snapshot(Path(tmp)) == before


# --- version strings -----------------------------------------------------------------------

ASCII_VERSION = re.compile(r"[0-9]+\.[0-9]+(?:\.[0-9]+)?")


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=st.one_of(hostile_text, st.from_regex(r"\d+\.\d+(\.\d+)?\n?"), st.integers()))
@example(text="1.2\n")
@example(text="١.٢")
@example(text="\n")
@example(text=10**100)
def test_version_strings_parse_to_numbers_or_one_line_error(text: Any) -> None:
    v, _ = outcome(lambda: rules.parse_version(text))
    if v is not None:
        assert ASCII_VERSION.fullmatch(str(text)), f"accepted {text!r}"
        assert ".".join(map(str, v)) == ".".join(str(int(p)) for p in str(text).split("."))


# --- server catalogs ------------------------------------------------------------------------

ENTRY = {
    "id": "srv-1",
    "product": "mariadb",
    "version": "10.11.18",
    "provider": "path",
    "basedir": "/opt/srv",
}


def yaml_scalar(value: Any) -> str:
    return json.dumps(value, allow_nan=True)  # JSON is YAML (flow style)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.one_of(st.sampled_from([*ENTRY, "packages", "maven", "stand_in"]), hostile_text),
    value=hostile_value,
    raw=st.booleans(),
)
@example(key="id", value="abc\n", raw=False)
@example(key="version", value="10.11.18\n", raw=False)
@example(key="version", value="١٠.١١", raw=False)
@example(key="basedir", value="../x", raw=True)
@example(key="provider", value=[], raw=False)  # a list: unhashable, was a TypeError
def test_catalog_from_generated_yaml_is_valid_or_one_line_error(key, value, raw) -> None:
    entry = {**ENTRY, key: value}
    if raw and isinstance(value, str):  # the value pasted unquoted: often not even YAML
        body = "\n".join(f"    {k}: {v if k == key else yaml_scalar(v)}" for k, v in entry.items())
        text = f"servers:\n  - {body.lstrip()}\n"
    else:
        text = "servers:\n  - " + json.dumps(entry, allow_nan=True) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "versions.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        before = snapshot(Path(tmp))
        cat, _ = outcome(lambda: catalog.read_catalog(path))
        assert snapshot(Path(tmp)) == before
    if cat is not None:
        for e in cat:
            assert safe_id(e.id, catalog.ID_RE), e.id
            assert ASCII_VERSION.fullmatch(e.version), e.version
            assert e.basedir is None or e.basedir.is_absolute()
            for p in e.packages:
                assert catalog.DEB_NAME_RE.fullmatch(p.name)
                assert catalog.DEB_VERSION_RE.fullmatch(p.version)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=400))
def test_catalog_of_any_text_is_valid_or_one_line_error(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "versions.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        outcome(lambda: catalog.read_catalog(path))


# --- run records ----------------------------------------------------------------------------


BASE_RECORD = make_record(intervals=3)  # synthetic test fixture
RECORD_PATHS = leaf_paths(BASE_RECORD)
ID_FIELDS = [
    ("run_id",),
    ("cell_id",),
    ("runner_class",),
    ("server", "id"),
    ("server", "provider"),
    ("server", "version"),
    ("hardware", "key"),
    ("cell", "workload"),
    ("cell", "charset"),
    ("cell", "collation"),
    ("cell", "profile"),
    ("tool", "name"),
]


def get(rec: dict[str, Any], path: tuple[Any, ...]) -> Any:
    for p in path:
        rec = rec[p]
    return rec


def assert_finite(obj: Any) -> None:
    if isinstance(obj, float):
        assert math.isfinite(obj), "a non-finite number was accepted"
    elif isinstance(obj, dict):
        for v in obj.values():
            assert_finite(v)
    elif isinstance(obj, list):
        for v in obj:
            assert_finite(v)


record_mutation = st.tuples(
    st.sampled_from(RECORD_PATHS),
    st.sampled_from(["replace", "replace", "delete", "extra"]),
    hostile_value,
)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(mutations=st.lists(record_mutation, min_size=1, max_size=3))
@example(mutations=[(("runner_class",), "replace", "x\n")])
@example(mutations=[(("server", "version"), "replace", "8.0.36\n")])
@example(mutations=[(("result", "tps"), "replace", float("nan"))])
@example(mutations=[(("variables",), "replace", {"a\nb": 1})])
def test_mutated_records_are_valid_or_refused_naming_the_field(mutations) -> None:
    rec = BASE_RECORD
    for path, how, value in mutations:
        with contextlib.suppress(KeyError, TypeError, IndexError):
            rec = mutate(rec, path, how, value)
    ok, err = outcome(lambda: record.validate(rec, where="r.json"))
    if err is not None:
        assert "r.json: field '" in str(err), str(err)
        return
    for path in ID_FIELDS:
        assert safe_id(get(ok, path), re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]*")), path
    assert_finite(ok)


@settings(
    max_examples=SLOW_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(mutations=st.lists(record_mutation, min_size=1, max_size=2))
@example(mutations=[(("hardware", "cores"), "replace", 10**100)])
@example(mutations=[(("cell", "round"), "replace", 2**63)])
@example(mutations=[(("result", "events"), "replace", 10**30)])
def test_records_that_validate_also_ingest(mutations) -> None:
    """Validation is the whole gate: whatever passes it, the DB takes (or refuses cleanly)."""
    rec = BASE_RECORD
    for path, how, value in mutations:
        with contextlib.suppress(KeyError, TypeError, IndexError):
            rec = mutate(rec, path, how, value)
    ok, _ = outcome(lambda: record.validate(rec))
    assume(ok is not None)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "results.duckdb"

        def ingest() -> int:
            with store.open_db(db, write=True) as st_:
                return st_.ingest([ok]).added

        added, err = outcome(ingest)
        assert err is None and added == 1, f"validated, then refused by the DB: {err}"


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=st.one_of(st.text(max_size=200), st.sampled_from(["NaN", "Infinity", "-Infinity"])))
@example(text="NaN")
@example(text="Infinity")
def test_record_files_of_any_text_are_refused_with_one_line(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "0123456789abcdef.1.json"
        body = json.dumps(BASE_RECORD).replace('"tps": 1000.0', f'"tps": {text}', 1)
        for content in (text, body):
            path.write_text(content, encoding="utf-8", errors="surrogateescape")
            rec, _ = outcome(lambda p=path: record.read(p))
            if rec is not None:
                assert_finite(rec)


# --- profiles (my.cnf fragments) ------------------------------------------------------------

# What perftrack sets in my.cnf and a profile must never change, as the server reads it:
# option names are case-insensitive, '_' == '-', prefixes loose-/skip-/enable-/disable-/
# maximum- apply to the name after them, and a unique abbreviation of a name is that name
# (MariaDB 10.11: `bind=0.0.0.0` and `loose-bind-address=0.0.0.0` both set bind-address).
GUARDED = (
    "basedir",
    "datadir",
    "socket",
    "port",
    "bind-address",
    "log-error",
    "pid-file",
    "tmpdir",
)
OPTION_PREFIXES = ("loose-", "skip-", "enable-", "disable-", "maximum-")
RESERVED_NAMES = [
    "basedir",
    "datadir",
    "socket",
    "port",
    "bind-address",
    "bind_address",
    "log-error",
    "pid-file",
    "user",
    "character-set-server",
    "collation-server",
    "skip-networking",
    "lc-messages-dir",
    "tmpdir",
]


def canonical(name: str) -> str:
    name = name.strip().lower().replace("_", "-")
    while name.startswith(OPTION_PREFIXES):
        name = name.split("-", 1)[1]
    return name


def server_reading(cnf: str) -> dict[str, str | None]:
    """The [mysqld] options as the server applies them: later lines win."""
    seen: dict[str, str | None] = {}
    for line in cnf.split("\n"):
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, sep, value = line.partition("=")
        name = canonical(key)
        for full in GUARDED:
            if full.startswith(name) and name:  # the exact name or an abbreviation of it
                seen[full] = value.strip() if sep else None
    return seen


def fake_install() -> Install:
    base = Path("/opt/fake-server")
    return Install(
        server_id="fake",
        product="mariadb",
        version="10.11.18",
        provider="path",
        basedir=base,
        mysqld=base / "bin/mysqld",
        share_dir=base / "share",
    )


profile_line = st.one_of(
    st.builds(
        lambda prefix, name, sep, value: f"{prefix}{name}{sep}{value}",
        st.sampled_from(["", "loose-", "loose_", "LOOSE-", "skip-", "enable-", "maximum-", " "]),
        st.one_of(
            st.sampled_from(RESERVED_NAMES),
            st.sampled_from(RESERVED_NAMES).map(lambda n: n[: max(1, len(n) - 3)]),
            st.sampled_from(RESERVED_NAMES).map(str.upper),
            st.from_regex(r"[a-z][a-z_-]{0,20}", fullmatch=True),
            hostile_text,
        ),
        st.sampled_from(["=", " = ", "", "=="]),
        st.one_of(st.sampled_from(["0.0.0.0", "/etc", "3306", "1"]), hostile_text),
    ),
    hostile_text,
    st.sampled_from(["[client]", "[mysqld]", "!include /etc/passwd", "!includedir /etc"]),
)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(lines=st.lists(profile_line, min_size=1, max_size=5))
@example(lines=["bind=0.0.0.0"])
@example(lines=["loose-bind-address=0.0.0.0"])
@example(lines=["LOOSE_PORT=1"])
@example(lines=["datad=/x"])
@example(lines=["skip-bind-address"])
@example(lines=["base=/"])
@example(lines=["lc-messages=en_US"])
@example(lines=["general_log_file=/etc/cron.d/x"])
@example(lines=["slow_query_log_file=../x"])
def test_profiles_cannot_inject_options_or_override_perftracks(lines: list[str]) -> None:
    text = "[mysqld]\n" + "\n".join(lines) + "\n"
    opts, _ = outcome(lambda: profiles.parse(text, "p.cnf"))
    if opts is None:
        return

    def cnf_lines(options: dict[str, str | None]) -> list[str]:
        srv = Server(install=fake_install(), options=options)
        srv.dir = Path("/w/pt-x")
        srv.port = 40000
        cnf = srv.my_cnf_text()
        return [ln for ln in cnf.split("\n") if ln and not ln.startswith(("#", "["))]

    body = cnf_lines(opts)
    assert len(body) == len(cnf_lines({})) + len(opts), "one my.cnf line per option, no more"
    cnf = "\n".join(["[mysqld]", *body])
    applied = server_reading(cnf)
    assert applied["bind-address"] == "127.0.0.1", cnf
    assert applied["port"] == "40000"
    assert applied["datadir"] == "/w/pt-x/data"
    assert applied["socket"] == "/w/pt-x/s.sock"
    assert applied["basedir"] == "/opt/fake-server"
    assert applied["tmpdir"] == "/w/pt-x/tmp"
    for key in opts:
        name = canonical(key)
        assert not any(r.startswith(name) for r in map(canonical, RESERVED_NAMES)) or (
            name in profiles.EXACT_OPTIONS
        ), f"profile may set {key!r}"
    for key, value in opts.items():  # no file outside the datadir, which perftrack removes
        absolute = value is not None and value.startswith("/") and value != "/dev/null"
        assert not absolute and ".." not in (value or "").split("/"), f"{key}={value}"


# --- annotations ----------------------------------------------------------------------------

annotation_entry = st.fixed_dictionaries(
    {"reason": hostile_text, "match": st.dictionaries(hostile_text, hostile_value, max_size=2)},
    optional={
        "link": hostile_text,
        "date": hostile_value,
        "extra": hostile_value,
        "state": st.one_of(hostile_value, st.sampled_from(["acknowledged", "false_positive"])),
    },
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.lists(
        st.one_of(
            annotation_entry,
            st.builds(
                lambda r, k, v: {"reason": r, "match": {k: v}},
                hostile_text,
                st.sampled_from(["servers", "server", "workload", "threads", "collation"]),
                hostile_value,
            ),
        ),
        max_size=3,
    )
)
@example(entries=[{"reason": "r", "match": {"\x1e": None}}])
@example(entries=[{"reason": "two\rlines", "match": {"server": "a"}}])
@example(entries=[{"reason": "r", "match": {"server": "a\n"}, "link": "https://x\n"}])
def test_annotations_are_valid_one_line_text_or_one_line_error(entries) -> None:
    annotations = pytest.importorskip("perftrack.analysis.annotations")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "annotations.yaml"
        path.write_text(json.dumps({"annotations": entries}, allow_nan=True))
        notes, _ = outcome(lambda: annotations.read_annotations(path))
    for note in notes or []:
        assert note.reason.strip() and len(note.reason.splitlines()) == 1, note.reason
        assert note.link is None or note.link.startswith("https://")
        assert note.state in annotations.STATES
        for key, value in note.match.items():
            if key == "threads":
                assert type(value) is int
            elif key == "servers":
                assert all(safe_id(v) for v in value)
            else:
                assert safe_id(value), value


# --- downloaded archive contents -------------------------------------------------------------

LINK = stat.S_IFLNK | 0o777
member_name = st.one_of(
    st.sampled_from([*PATHS, "top/", "top/a", "top/a/b", "top/../x", "a\\..\\..\\b", "C:x"]),
    st.builds(
        "/".join,
        st.lists(
            st.one_of(st.sampled_from(["..", ".", "", "top", "a", "b"]), st.text(max_size=8)),
            min_size=1,
            max_size=4,
        ),
    ),
)
zip_member = st.tuples(
    member_name,
    st.sampled_from(["file", "dir", "link"]),
    st.one_of(st.sampled_from([*PATHS, "a", "top/a", "../..", "/"]), member_name),
)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(members=st.lists(zip_member, min_size=1, max_size=5))
@example(members=[("a", "link", "\x00")])
@example(members=[("a", "file", ""), ("a/b", "file", "")])
@example(members=[("a/b", "dir", ""), ("a/b", "file", "")])
@example(members=[("top/escape", "link", "../../outside")])
@example(members=[("l", "link", "."), ("l/x", "file", "")])
@example(members=[("top", "link", "top//..")])
def test_zip_extraction_never_writes_outside_its_directory(members) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        archive = root / "a.zip"
        with zipfile.ZipFile(archive, "w") as zf, warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # duplicate names: on purpose
            for name, kind, target in members:
                info = zipfile.ZipInfo(name.rstrip("/") + "/" if kind == "dir" else name)
                info.create_system = 3  # Unix: the mode bits below are honoured
                if kind == "link":
                    info.external_attr = LINK << 16
                    data = target.encode("utf-8", "surrogateescape")
                else:
                    info.external_attr = (stat.S_IFREG | 0o644) << 16
                    data = b"payload"
                with contextlib.suppress(ValueError):  # names zipfile itself refuses
                    zf.writestr(info, data)
        (root / "outside").mkdir()
        dest = root / "work" / "x"
        before = snapshot(root)
        outcome(lambda: cache.safe_extract_zip(archive, dest))
        after = snapshot(root)
        outside = {p for p in after - before if not p.startswith("work/x")}
        assert outside <= {"work"}, f"written outside the extraction dir: {outside}"
        real_dest = Path(os.path.realpath(dest))
        for p in dest.rglob("*") if dest.exists() else []:
            if p.is_symlink():
                assert Path(os.path.realpath(p)).is_relative_to(real_dest), p


tar_member = st.tuples(
    member_name,
    st.sampled_from(["file", "dir", "symlink", "hardlink", "fifo", "chardev"]),
    st.one_of(st.sampled_from([*PATHS, "a", "top/a", "../..", "/", ""]), member_name),
)


def make_tar(path: Path, members: list[tuple[str, str, str]]) -> None:
    kinds = {
        "file": tarfile.REGTYPE,
        "dir": tarfile.DIRTYPE,
        "symlink": tarfile.SYMTYPE,
        "hardlink": tarfile.LNKTYPE,
        "fifo": tarfile.FIFOTYPE,
        "chardev": tarfile.CHRTYPE,
    }
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for name, kind, target in members:
            info = tarfile.TarInfo(name)
            info.type = kinds[kind]
            info.mode = 0o755 if kind == "dir" else 0o644
            payload = b"payload" if kind == "file" else b""
            info.size = len(payload)
            if kind in ("symlink", "hardlink"):
                info.linkname = target
            with contextlib.suppress(ValueError, UnicodeError):  # names tarfile refuses
                tf.addfile(info, io.BytesIO(payload))


@pytest.mark.skipif(not hasattr(cache, "safe_extract_tar"), reason="no tar extractor yet")
@settings(max_examples=EXAMPLES * 2, deadline=None)
@example(members=[("../evil", "file", "")])
@example(members=[("/tmp/evil-absolute", "file", "")])
@example(members=[("top/escape", "symlink", "../../outside")])
@example(members=[("top/hard", "hardlink", "/etc/passwd")])
@example(members=[("l", "symlink", "."), ("l/x", "file", "")])
@example(members=[("a", "file", ""), ("a/b", "file", "")])
@example(members=[("a/b", "dir", ""), ("a/b", "file", "")])
@example(members=[("dev", "chardev", "")])
@example(members=[("a/b", "symlink", "\x00\x80")])  # found by hypothesis: NUL in a link
@example(members=[("top", "hardlink", "top"), ("top", "fifo", "")])
@given(members=st.lists(tar_member, min_size=1, max_size=5))
def test_tar_extraction_never_writes_outside_its_directory(members) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        archive = root / "a.tar.gz"
        make_tar(archive, members)
        (root / "outside").mkdir()
        dest = root / "work" / "x"
        before = snapshot(root)
        outcome(lambda: cache.safe_extract_tar(archive, dest))
        after = snapshot(root)
        outside = {p for p in after - before if not p.startswith("work/x")}
        assert outside <= {"work"}, f"written outside the extraction dir: {outside}"
        real_dest = Path(os.path.realpath(dest))
        for p in dest.rglob("*") if dest.exists() else []:
            if p.is_symlink():
                assert Path(os.path.realpath(p)).is_relative_to(real_dest), p
            assert not stat.S_ISCHR(p.lstat().st_mode) and not stat.S_ISFIFO(p.lstat().st_mode)
