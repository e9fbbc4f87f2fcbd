"""pass@k and its intervals: expected values computed by hand from the definitions."""

from __future__ import annotations

import pytest

from pipeline.policy_eval.passk import bootstrap_interval, paired_bootstrap_difference, pass_at_k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 1 - 3 / 5),  # 1 - C(3,1)/C(5,1)
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (10, 3, 3, 1 - 35 / 120),  # 1 - C(7,3)/C(10,3)
        (10, 1, 5, 1 - 126 / 252),  # 1 - C(9,5)/C(10,5) = 0.5
        (5, 2, 4, 1.0),  # fewer than k wrong samples: some correct one is always drawn
        (10, 0, 5, 0.0),
        (4, 4, 1, 1.0),
        (1, 1, 1, 1.0),
        (1, 0, 1, 0.0),
    ],
)
def test_pass_at_k_matches_the_binomial_definition(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_1_is_the_share_correct() -> None:
    assert pass_at_k(8, 3, 1) == pytest.approx(3 / 8)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_pass_at_k_refuses_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass_at_k"):
        pass_at_k(n, c, k)


def test_bootstrap_interval_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.25, 1.0]
    a = bootstrap_interval(values, resamples=500, seed=3)
    assert a == bootstrap_interval(values, resamples=500, seed=3)
    mean = sum(values) / len(values)
    assert 0.0 <= a[0] < mean < a[1] <= 1.0


def test_bootstrap_interval_of_constant_values_is_a_point() -> None:
    assert bootstrap_interval([0.4] * 6, resamples=200) == pytest.approx((0.4, 0.4))


def test_paired_difference_is_mean_of_b_minus_a() -> None:
    d, lo, hi = paired_bootstrap_difference([0, 0, 1], [1, 1, 1], resamples=300)
    assert d == pytest.approx(2 / 3)
    assert 0.0 <= lo <= d <= hi <= 1.0
    with pytest.raises(ValueError, match="same problems"):
        paired_bootstrap_difference([0, 1], [1], resamples=300)
