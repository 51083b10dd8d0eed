"""benchmarks/per_night_files.py on a small SYNTHETIC history (benchmarks/synthetic_history.py,
grown several nights per ingest into tmp_path, a real DuckDB file and real night files):
one file set a night afterwards, the same rows, the source untouched."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fixtures.records.synthetic import make_record
from perftrack.core.files import sha256_file
from perftrack.store import store
from perftrack.store.files import nightfiles

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
NIGHTS = 7


@pytest.fixture(scope="module")
def tools():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import per_night_files
        import synthetic_history
    finally:
        sys.path.remove(str(BENCHMARKS))
    return per_night_files, synthetic_history


def grown(tmp_path: Path, synth) -> Path:
    src = tmp_path / "src"
    (src / "site").mkdir(parents=True)
    (src / "site" / "index.html").write_text("synthetic\n")
    synth.grow_fast(src / "synthetic-history.duckdb", synth.load_setup(NIGHTS), 0, NIGHTS, 3)
    return src


def on_disk(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): sha256_file(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_each_night_gets_its_own_files_and_every_row_stays(tmp_path: Path, tools) -> None:
    pnf, synth = tools
    src = grown(tmp_path, synth)
    before = on_disk(src)
    dst = tmp_path / "dst"
    assert pnf.main([str(src), str(dst)]) == 0
    assert on_disk(src) == before  # SRC only read
    db = dst / pnf.DB_NAME
    assert pnf.files_per_table(src / pnf.DB_NAME)["results"] == 1 + 3  # creation + 3 ingests
    files = pnf.files_per_table(db)
    assert files["results"] == files["runs"] == 1 + NIGHTS  # creation set + one a night
    assert files["servers"] == files["hardware"] == files["server_variables"] == 2
    assert pnf.layout_problems(db) == []
    assert pnf.layout_problems(src / pnf.DB_NAME) != []  # 3 nights a file there
    assert (dst / "site" / "index.html").read_text() == "synthetic\n"
    listed = {
        p.relative_to(nightfiles.files_dir(db)).as_posix() for p in nightfiles.listed_paths(db)
    }
    assert set(on_disk(nightfiles.files_dir(db))) == listed  # the old files are gone
    names = sorted(p for p in listed if p.endswith(".results.parquet"))
    assert names[0].split("-")[1].startswith(pnf.CREATION)  # created before the first night
    with store.open_db(db, write=False) as st:
        assert st.check() == []
    assert pnf.fingerprints(db) == pnf.fingerprints(src / pnf.DB_NAME)
    with store.open_db(db, write=True) as st:  # one more row: the comparison sees it
        st.ingest([make_record(run_id="synthetic-00099-a")])
    assert not pnf.check(src / pnf.DB_NAME, db)


def test_bad_arguments_exit_2_and_write_nothing(tmp_path: Path, tools) -> None:
    pnf, _ = tools
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    with pytest.raises(SystemExit) as missing:
        pnf.main([str(tmp_path / "nothing"), str(tmp_path / "dst")])
    assert missing.value.code == 2
    assert not (tmp_path / "dst").exists()
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / pnf.DB_NAME).write_bytes(b"")
    with pytest.raises(SystemExit) as occupied:
        pnf.main([str(tmp_path / "nothing"), str(busy)])
    assert occupied.value.code == 2
    assert on_disk(busy) == {"x": sha256_file(busy / "x")}
