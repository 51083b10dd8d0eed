"""compare.versus_all (and stats.compare_paired_all under it) against compare.versus,
one pair at a time: the same Comparison, bit for bit, for every kind of pair."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from perftrack.analysis import compare, stats

# measured-like values (and 0 and negatives, which a comparison refuses); not 1e-300
VALUES = st.one_of(st.just(0.0), st.floats(1e-3, 1e6), st.floats(-5, -1e-3))


def _row(name: str, values: list[float], rounds: list[tuple[str, int]]) -> compare.Row:
    return compare.Row(
        server_id=name,
        product="mysql",
        version="8.0.1",
        version_string=None,
        values=values,
        latency=[],
        rounds=rounds,
    )


@st.composite
def pairs(draw: st.DrawFn) -> tuple[compare.Row, compare.Row, float | None, float | None]:
    n = draw(st.integers(0, 12))
    base = draw(st.lists(st.sampled_from([1.0, 2.5, 100.0, 1e4, 0.0]), min_size=n, max_size=n))
    noisy = draw(st.booleans())
    va = [b + (draw(VALUES) if noisy else 0.0) for b in base]
    vb = draw(st.one_of(st.just(list(va)), st.lists(VALUES, min_size=n, max_size=n)))
    ra = [("r1", i) for i in range(n)]
    how = draw(st.sampled_from(["same", "shifted", "duplicate", "none", "fewer"]))
    rb = {
        "same": list(ra),
        "shifted": [("r1", i + draw(st.integers(0, 3))) for i in range(n)],
        "duplicate": [("r1", 0)] * n,
        "none": [],
        "fewer": ra[: n // 2],
    }[how]
    if how == "fewer":
        vb = vb[: n // 2]
    cv = draw(st.one_of(st.none(), st.floats(0.001, 0.5)))
    spread = draw(st.one_of(st.none(), st.floats(0.001, 0.5)))
    return (_row("a", va, ra), _row("b", vb, rb), cv, spread)


@settings(max_examples=400, deadline=None)
@given(st.lists(pairs(), max_size=8), st.booleans(), st.integers(1, 4), st.booleans())
def test_versus_all_is_versus_of_each_pair(
    many: list[tuple[compare.Row, compare.Row, float | None, float | None]],
    higher: bool,
    looks: int,
    defer: bool,
) -> None:
    got = compare.versus_all(
        [(a, b, cv, higher, spread) for a, b, cv, spread in many],
        looks=looks,
        defer_unpaired=defer,
    )
    want = [compare.versus(a, b, cv, higher, spread, looks=looks) for a, b, cv, spread in many]
    for g, w in zip(got, want, strict=True):
        if isinstance(g, compare.Deferred):  # only an unpaired pair is left to the caller
            assert defer and (w is None or not w.paired)
        else:
            assert g == w


def test_compare_paired_all_is_compare_paired_at_the_sizes_the_site_sees() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    batch, thresholds = [], []
    for n in (3, 5, 8, 9, 128, 129, 200, 200, 200, 201):
        a = list(rng.lognormal(8, 0.1, n))
        b = list(rng.lognormal(8.02, 0.1, n))
        batch.append((a, b))
        thresholds.append(0.03 if n % 2 else (lambda sd, n=n: stats.paired_threshold(sd, n)))
    got = stats.compare_paired_all(batch, thresholds, [False] * len(batch))
    for (a, b), thr, c in zip(batch, thresholds, got, strict=True):
        want_thr = thr(stats.paired_spread(a, b)) if callable(thr) else thr
        assert c == stats.compare_paired(a, b, higher_is_better=False, threshold=want_thr)
    assert {c.verdict for c in got if c} <= set(stats.VERDICTS)
