"""Which of two engines is ahead, by a rule with a stated error rate.

The rule (`RULE`): Welch's t-test on the logarithms of each engine's run figures, two-sided at
5 %, with each engine's variance floored at what quantisation alone would give, and at least three
runs of each engine. In numbers:

    x_i = ln(figure_i)                      (a ratio of 2 is a difference of ln 2 either way)
    v   = max(sample variance of x, floor)  floor = mean over runs of ln(1 + resolution)^2 / 12
    se  = sqrt(v_a / n_a + v_b / n_b),  t = (mean x_a - mean x_b) / se
    df  = min(n_a, n_b) - 1                 (Hsu's conservative degrees of freedom)

and an engine is named ahead when the two-sided p-value of t on df degrees of freedom is under 5 %.
On logarithms, because run-to-run noise in a throughput figure is a share of it (10 % of 2,000 is
not 10 % of 200) and a ratio is what a reader takes away ("+57 %").

Why the floor: a ceiling from a ladder is the highest step held, so runs of one engine often read
exactly the same (2,000 / 2,000 / 2,000) and the sample variance is 0, which would make any
difference of one step look certain. A figure known to a resolution r (the true value lies in
[figure, figure * (1 + r))) has at least the variance of a uniform draw over that width; the
floor is that variance, ln(1 + r)^2 / 12. Why Hsu's degrees of freedom rather than
Welch-Satterthwaite's: quantised figures are not normal, and with Satterthwaite's the simulation
in tests/result/test_verdict.py found noise-to-step ratios at which identical engines were called
different 4.9 % of the time with 4 runs each, at the edge of the promise; with min(n) - 1 the
worst it found was 3.5 % (3 runs each) and 2.3 % (4 runs), whatever the spread of noise against
the step. The price is power with few runs: with 3 runs each the interval uses t(2) = 4.30, so a
steady 2x difference is named while run-to-run noise stays under about 15 %.

What the rule promises, checked there by simulation over thousands of draws: two identical
engines (the same distribution of figures, continuous or step-quantised) are called different at
most 5 % of the time; fewer than 3 runs of either engine never names one ("cannot tell"); a steady
2x difference over 3 runs each is named. When no winner is named the 95 % interval of the ratio
says how close the engines are: "about the same" if it lies within +-10 %, else "cannot tell
apart" with the interval.

A figure rests on levels judged by their p95 (the level held at a ceiling, the one failed above
it), and a p95 read from a level's requests is known only to its interval (`interval.py`). Where
the interval of the winner's level held, or of the loser's level failed by its p95 alone, holds the
pass mark, that level's verdict is not settled by what was measured, and neither is the order the
two engines' figures give: no winner is named ("overlap"), whatever the t-test says.

A figure can be a bound: a run in which no level failed held at least its figure ("at_least"), a
run whose first level failed held less than it ("below"). The test runs on the figures as they
are, and the words keep them bounds: a winner whose figure is a floor is "at least" so much ahead;
an engine is never named behind one whose figure is a floor at or below its own, since its true
figure may be higher.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.05
"""The false-winner rate the rule allows on two identical engines: two-sided, both directions together."""

MIN_RUNS = 3
"""Runs of each engine needed before the rule names one ahead: with two, a t-test has one degree of
freedom per engine and its interval spans everything (t 12.7 for 95 %)."""

SAME_WITHIN = 0.10
"""No winner, and the 95 % interval of the ratio within +-10 %: "about the same"."""

FLOOR_FACTOR = 1.0
"""The variance floor in units of a uniform quantisation's variance, ln(1 + r)^2 / 12 (see module doc)."""

MIN_VARIANCE = 1e-6
"""A variance floor for figures given with no resolution: a spread of 0.1 %, the rounding of a figure."""

RULE = (
    "An engine is named ahead only when Welch's t-test on the logarithms of its runs' figures against "
    "the other's, two-sided at 5 % (each engine's spread floored at its figure's resolution), says so, "
    "which happens at most 1 time in 20 for two identical engines, and never with fewer than "
    f"{MIN_RUNS} runs of each."
)
"""The rule in one sentence, for reports."""

EXACT, AT_LEAST, BELOW = "exact", "at_least", "below"


@dataclass(frozen=True)
class Figure:
    """One run's figure: its value, what kind of bound it is, and its resolution.

    bound       "exact"; "at_least" (no level failed: the true figure is this or more); "below"
                (the first level failed: the true figure is under this value, the first level's)
    resolution  the true figure lies in [value, value * (1 + resolution)): a ladder's step over the
                figure, a search's last bracket; 0 for a continuous figure
    held_in_doubt    the level held at the figure has a p95 interval that holds the pass mark
    failed_in_doubt  the level failed above it failed by its p95 alone, with such an interval
    """

    value: float
    bound: str = EXACT
    resolution: float = 0.0
    held_in_doubt: bool = False
    failed_in_doubt: bool = False


@dataclass(frozen=True)
class Verdict:
    """Engine a against engine b.

    outcome   "a" or "b" (that engine is ahead), "same" (no winner, and the 95 % interval of the
              ratio within +-10 %), "unclear" (no winner, a wider interval), "too few runs"
              (fewer than MIN_RUNS runs of an engine), "bounds" (the figures are bounds that
              cannot be ordered, e.g. both held every level), "overlap" (the test would name
              one, but a level the order rests on has a p95 interval that holds the pass mark)
    ratio     geometric mean of a's figures over b's (1.57: a is 57 % higher)
    low, high the 95 % interval of that ratio (None when fewer than 2 runs of an engine)
    at_least  the ratio of winner to loser is a floor (the winner's figures include a lower bound,
              or the loser's an upper bound): say "at least"
    p_value   Welch's two-sided p-value (None when not computed)
    """

    outcome: str
    ratio: float
    low: float | None = None
    high: float | None = None
    at_least: bool = False
    p_value: float | None = None

    @property
    def named(self) -> bool:
        """Whether an engine was named ahead."""
        return self.outcome in ("a", "b")

    @property
    def gain(self) -> float:
        """How much higher the engine ahead (or a, when none is) is, as a fraction: 0.57 for +57 %."""
        return (1 / self.ratio if self.outcome == "b" else self.ratio) - 1


@dataclass(frozen=True)
class Welch:
    """Welch's t-test of two samples (Hsu's degrees of freedom): difference of means, its standard
    error, t, df and the two-sided p-value."""

    difference: float
    se: float
    t: float
    df: float
    p_value: float


def _floor(figures: Sequence[Figure]) -> float:
    quantum = statistics.fmean(math.log1p(max(figure.resolution, 0.0)) ** 2 for figure in figures)
    return max(FLOOR_FACTOR * quantum / 12, MIN_VARIANCE)


def welch(a: Sequence[float], b: Sequence[float], floor_a: float = 0.0, floor_b: float = 0.0) -> Welch:
    """Welch's t-test of samples a and b (two or more values each), variances floored as given, on
    Hsu's min(n_a, n_b) - 1 degrees of freedom."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        raise ValueError("Welch's t-test needs at least 2 values in each sample")
    va = max(statistics.variance(a), floor_a) / na
    vb = max(statistics.variance(b), floor_b) / nb
    difference = statistics.fmean(a) - statistics.fmean(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return Welch(difference, 0.0, 0.0 if difference == 0 else math.inf, math.inf, float(difference == 0))
    df = min(na, nb) - 1
    t = difference / se
    return Welch(difference, se, t, df, t_two_sided_p(t, df))


def _value(figure: Figure) -> float:
    # A run that held no level has 0 as its figure and "below" as its bound; its true figure is
    # under the first level. Tests need a positive figure: a tiny one sorts it below every run
    # that held a level, and the bound keeps it from ever being named ahead.
    return max(figure.value, 1e-9)


def compare(a: Sequence[Figure], b: Sequence[Figure]) -> Verdict:
    """Engine a's runs against engine b's by the rule in `RULE`; see `Verdict` for the outcomes."""
    if not a or not b:
        raise ValueError("compare needs at least one run of each engine")
    logs_a = [math.log(_value(figure)) for figure in a]
    logs_b = [math.log(_value(figure)) for figure in b]
    ratio = math.exp(statistics.fmean(logs_a) - statistics.fmean(logs_b))
    kinds_a, kinds_b = {figure.bound for figure in a}, {figure.bound for figure in b}
    if len(a) < 2 or len(b) < 2:
        both = kinds_a == kinds_b == {AT_LEAST} or kinds_a == kinds_b == {BELOW}
        return Verdict("bounds" if both else "too few runs", ratio)
    test = welch(logs_a, logs_b, _floor(a), _floor(b))
    if math.isfinite(test.df) and test.se > 0:
        spread = t_quantile(1 - ALPHA / 2, test.df) * test.se
        low, high = math.exp(test.difference - spread), math.exp(test.difference + spread)
    else:
        low = high = ratio
    kinds_a, kinds_b = {figure.bound for figure in a}, {figure.bound for figure in b}
    if kinds_a == kinds_b == {AT_LEAST} or kinds_a == kinds_b == {BELOW}:
        # Both held every level, or neither held one: the figures are the ladder's ends, not the engines'.
        return Verdict("bounds", ratio, low, high, p_value=test.p_value)
    if min(len(a), len(b)) < MIN_RUNS:
        return Verdict("too few runs", ratio, low, high, p_value=test.p_value)
    if test.p_value < ALPHA:
        ahead, behind = ("a", kinds_b) if test.difference > 0 else ("b", kinds_a)
        winner = kinds_a if ahead == "a" else kinds_b
        if AT_LEAST in behind or BELOW in winner:
            # The engine behind may be higher than it shows (or the one ahead lower): no order.
            return Verdict("bounds", ratio, low, high, p_value=test.p_value)
        ahead_figures, behind_figures = (a, b) if ahead == "a" else (b, a)
        if any(f.held_in_doubt for f in ahead_figures) or any(f.failed_in_doubt for f in behind_figures):
            # The winner's pass or the loser's failure is not settled by its p95's interval.
            return Verdict("overlap", ratio, low, high, p_value=test.p_value)
        return Verdict(ahead, ratio, low, high, AT_LEAST in winner or BELOW in behind, test.p_value)
    if AT_LEAST in kinds_a | kinds_b or BELOW in kinds_a | kinds_b:
        return Verdict("bounds", ratio, low, high, p_value=test.p_value)
    same = low >= 1 / (1 + SAME_WITHIN) and high <= 1 + SAME_WITHIN
    return Verdict("same" if same else "unclear", ratio, low, high, p_value=test.p_value)


# Student's t distribution, from the regularised incomplete beta function (Numerical Recipes,
# 2nd ed., 6.4: the continued fraction evaluated by the modified Lentz method). The standard
# library has lgamma but no beta function; scipy would be a 40 MB dependency for these 40 lines,
# which tests/result/test_verdict.py checks against printed t tables.


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < eps:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if not 0 <= x <= 1:
        raise ValueError(f"x must be from 0 to 1, not {x}")
    if x in (0, 1):
        return float(x)
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom (df may be fractional, as Welch's is)."""
    if math.isinf(t):
        return 0.0
    return incomplete_beta(df / 2, 0.5, df / (df + t * t))


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom."""
    tail = t_two_sided_p(t, df) / 2
    return 1 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=256)
def t_quantile(q: float, df: float) -> float:
    """The t with P(T <= t) = q, by bisection on `t_cdf` (to 1e-10)."""
    if not 0 < q < 1:
        raise ValueError(f"q must be between 0 and 1, not {q}")
    if q < 0.5:
        return -t_quantile(1 - q, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < q:
        low, high = high, high * 2
    while high - low > 1e-10 * max(1.0, high):
        middle = (low + high) / 2
        low, high = (middle, high) if t_cdf(middle, df) < q else (low, middle)
    return (low + high) / 2
