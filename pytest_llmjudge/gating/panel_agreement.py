"""How far a panel's judges agree on a benchmark, and how many independent votes they are worth.

Pure, over each case's member verdicts (True pass, False fail, None errored):

- each member's pass rate over the cases it answered;
- Cohen's κ of each pair of members, over the cases both answered:
  κ = (p_o − p_e) / (1 − p_e), p_o the share of cases they agree on, p_e the agreement their pass
  rates give by chance (p_a·p_b + (1 − p_a)(1 − p_b));
- Fleiss' κ of all members, over the cases every member answered: with n members and N cases,
  P_i = (Σ_j n_ij² − n) / (n(n − 1)) for each case (n_ij: members voting j ∈ {pass, fail}),
  P̄ the mean of the P_i, P_e = Σ_j p_j² (p_j: the share of all votes that are j),
  κ = (P̄ − P_e) / (1 − P_e);
- the number of split cases (members that answered disagree);
- the effective number of judges: n_eff = n / (1 + (n − 1)·ρ̄), ρ̄ the mean over pairs of members
  of the correlation of their votes (Pearson's φ of the 0/1 votes on the cases both answered),
  clipped to [0, 1]. Independent judges (ρ̄ = 0) are worth n votes; judges that always vote
  alike (ρ̄ = 1) are worth one. It is the design effect of equicorrelated votes (Kish), as used
  for correlated judges' errors; with human labels the errors' correlation would be the sharper
  measure, the votes' needs none.

A κ or a correlation is None where it is undefined: no cases, or every vote the same (p_e = 1,
or a member with no variance).

In pairwise mode a vote is the candidate's outcome by a member (``win``, ``tie`` or ``loss``; an
inconsistent pair counts as a tie) instead of pass/fail: the κs count agreement over the three
(p_e = Σ_k p_a(k)·p_b(k) for Cohen's, Σ_k p_k² for Fleiss'), the correlation is Pearson's over
the scores loss 0, tie ½, win 1, and a member's rate is its share of wins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

Vote = bool | str  # pass/fail, or a pairwise outcome (win, tie, loss)
Votes = Sequence[Vote | None]  # one case: each member's verdict, None where it errored
_SCORES: dict[Vote, float] = {True: 1.0, False: 0.0, "win": 1.0, "tie": 0.5, "loss": 0.0}


@dataclass(frozen=True)
class MemberRate:
    member: str
    passes: int
    answered: int
    errors: int

    @property
    def rate(self) -> float | None:
        return self.passes / self.answered if self.answered else None


@dataclass(frozen=True)
class PairAgreement:
    """Two members over the cases both answered."""

    first: str
    second: str
    cases: int
    agreed: int
    kappa: float | None
    correlation: float | None


@dataclass(frozen=True)
class PanelAgreement:
    """A benchmark's panel agreement (see the module docstring for each formula)."""

    members: tuple[str, ...]
    cases: int
    rates: tuple[MemberRate, ...]
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: float | None
    fleiss_cases: int  # cases every member answered
    split_cases: int
    mean_correlation: float | None
    effective_judges: float | None
    outcomes: bool = False  # pairwise: the votes are outcomes, a member's rate its wins


def cohen_kappa(first: Sequence[Vote], second: Sequence[Vote]) -> float | None:
    """Cohen's κ of two raters' votes on the same cases."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    chance = sum((first.count(k) / n) * (second.count(k) / n) for k in set(first) | set(second))
    return None if chance >= 1 else (observed - chance) / (1 - chance)


def fleiss_kappa(cases: Sequence[Sequence[Vote]]) -> float | None:
    """Fleiss' κ of the votes of the same number of raters (two or more) on every case."""
    if not cases:
        return None
    raters = len(cases[0])
    if raters < 2 or any(len(c) != raters for c in cases):
        return None
    agreement = 0.0
    totals: dict[Vote, int] = {}
    for votes in cases:
        counts = {k: list(votes).count(k) for k in set(votes)}
        agreement += (sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1))
        for k, c in counts.items():
            totals[k] = totals.get(k, 0) + c
    mean_agreement = agreement / len(cases)
    chance = sum((c / (raters * len(cases))) ** 2 for c in totals.values())
    return None if chance >= 1 else (mean_agreement - chance) / (1 - chance)


def vote_correlation(first: Sequence[Vote], second: Sequence[Vote]) -> float | None:
    """Pearson's correlation of two members' votes as scores (φ for pass/fail); None when either
    never varies."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    xs, ys = [_SCORES[a] for a in first], [_SCORES[b] for b in second]
    ma, mb = sum(xs) / n, sum(ys) / n
    cov = sum((a - ma) * (b - mb) for a, b in zip(xs, ys, strict=True)) / n
    va, vb = sum((a - ma) ** 2 for a in xs) / n, sum((b - mb) ** 2 for b in ys) / n
    return None if va == 0 or vb == 0 else cov / math.sqrt(va * vb)


def effective_judges(members: int, mean_correlation: float | None) -> float | None:
    """n / (1 + (n − 1)·ρ̄), ρ̄ clipped to [0, 1]."""
    if members < 1 or mean_correlation is None:
        return None
    rho = min(1.0, max(0.0, mean_correlation))
    return members / (1 + (members - 1) * rho)


def _pair(members: tuple[str, ...], votes: Sequence[Votes], i: int, j: int) -> PairAgreement:
    first: list[Vote] = []
    second: list[Vote] = []
    for v in votes:
        a, b = v[i], v[j]
        if a is not None and b is not None:
            first.append(a)
            second.append(b)
    agreed = sum(1 for a, b in zip(first, second, strict=True) if a == b)
    return PairAgreement(
        members[i],
        members[j],
        len(first),
        agreed,
        cohen_kappa(first, second),
        vote_correlation(first, second),
    )


def panel_agreement(members: Sequence[str], votes: Sequence[Votes]) -> PanelAgreement:
    """The agreement of ``members`` over ``votes`` (per case, one verdict per member, in order)."""
    names = tuple(members)
    if any(len(v) != len(names) for v in votes):
        raise ValueError("every case needs one verdict per panel member")
    rates = tuple(
        MemberRate(
            name,
            sum(1 for v in votes if v[i] is True or v[i] == "win"),
            sum(1 for v in votes if v[i] is not None),
            sum(1 for v in votes if v[i] is None),
        )
        for i, name in enumerate(names)
    )
    pairs = tuple(_pair(names, votes, i, j) for i, j in combinations(range(len(names)), 2))
    complete = [[x for x in v if x is not None] for v in votes if all(x is not None for x in v)]
    correlations = [p.correlation for p in pairs if p.correlation is not None]
    mean = sum(correlations) / len(correlations) if correlations else None
    split = sum(1 for v in votes if len({x for x in v if x is not None}) > 1)
    return PanelAgreement(
        names,
        len(votes),
        rates,
        pairs,
        fleiss_kappa(complete),
        len(complete),
        split,
        mean,
        effective_judges(len(names), mean),
        any(isinstance(x, str) for v in votes for x in v),
    )
