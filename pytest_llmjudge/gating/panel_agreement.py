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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

Votes = Sequence[bool | None]  # one case: each member's verdict, None where it errored


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


def cohen_kappa(first: Sequence[bool], second: Sequence[bool]) -> float | None:
    """Cohen's κ of two raters' pass/fail votes on the same cases."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    pa, pb = sum(first) / n, sum(second) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance >= 1 else (observed - chance) / (1 - chance)


def fleiss_kappa(cases: Sequence[Sequence[bool]]) -> float | None:
    """Fleiss' κ of pass/fail votes, the same number of raters (two or more) on every case."""
    if not cases:
        return None
    raters = len(cases[0])
    if raters < 2 or any(len(c) != raters for c in cases):
        return None
    agreement, passes = 0.0, 0
    for votes in cases:
        yes = sum(votes)
        no = raters - yes
        agreement += (yes * yes + no * no - raters) / (raters * (raters - 1))
        passes += yes
    mean_agreement = agreement / len(cases)
    share = passes / (raters * len(cases))
    chance = share * share + (1 - share) * (1 - share)
    return None if chance >= 1 else (mean_agreement - chance) / (1 - chance)


def vote_correlation(first: Sequence[bool], second: Sequence[bool]) -> float | None:
    """Pearson's φ of two members' 0/1 votes; None when either never varies."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    ma, mb = sum(first) / n, sum(second) / n
    cov = sum((a - ma) * (b - mb) for a, b in zip(first, second, strict=True)) / n
    va, vb = ma * (1 - ma), mb * (1 - mb)
    return None if va == 0 or vb == 0 else cov / math.sqrt(va * vb)


def effective_judges(members: int, mean_correlation: float | None) -> float | None:
    """n / (1 + (n − 1)·ρ̄), ρ̄ clipped to [0, 1]."""
    if members < 1 or mean_correlation is None:
        return None
    rho = min(1.0, max(0.0, mean_correlation))
    return members / (1 + (members - 1) * rho)


def _pair(members: tuple[str, ...], votes: Sequence[Votes], i: int, j: int) -> PairAgreement:
    both = [(v[i], v[j]) for v in votes if v[i] is not None and v[j] is not None]
    first = [bool(a) for a, _ in both]
    second = [bool(b) for _, b in both]
    agreed = sum(1 for a, b in zip(first, second, strict=True) if a == b)
    return PairAgreement(
        members[i],
        members[j],
        len(both),
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
            sum(1 for v in votes if v[i] is True),
            sum(1 for v in votes if v[i] is not None),
            sum(1 for v in votes if v[i] is None),
        )
        for i, name in enumerate(names)
    )
    pairs = tuple(_pair(names, votes, i, j) for i, j in combinations(range(len(names)), 2))
    complete = [[bool(x) for x in v] for v in votes if all(x is not None for x in v)]
    correlations = [p.correlation for p in pairs if p.correlation is not None]
    mean = sum(correlations) / len(correlations) if correlations else None
    split = sum(1 for v in votes if True in v and False in v)
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
    )
