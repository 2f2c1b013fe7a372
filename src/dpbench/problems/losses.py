"""Margin losses ℓ(m) of linear classifiers, m = y·wᵀx, vectorised over examples.

Each loss gives its value, its (sub)derivative in the margin, its second derivative where it is
smooth (``curvature``, for Newton-type methods), and the constants the private methods need: the per-example gradient is ℓ′(m_i)·y_i·x_i, so its norm is |ℓ′(m_i)|·‖x_i‖;
``lipschitz`` bounds |ℓ′| and ``smoothness`` bounds |ℓ″| (None when the loss is not smooth).
The losses are those of chen_lee Sec 5.1 and 5.3 (logistic, hinge, Huberized hinge with h = 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np


@dataclass(frozen=True)
class LogisticLoss:
    """ℓ(m) = log(1 + e^{−m}) (chen_lee Sec 5.1, logistic regression)."""

    name: ClassVar[str] = "logistic"
    lipschitz: ClassVar[float] = 1.0
    smoothness: ClassVar[float | None] = 0.25

    def value(self, margins: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        # log(1 + e^{−m}) = max(−m, 0) + log1p(e^{−|m|}): stable, and about 1.5 times faster
        # than np.logaddexp on the n × k margin blocks of candidate scoring (scripts/bench.py).
        # ``out`` (not ``margins`` itself) saves a fresh array per call.
        margins = np.asarray(margins, dtype=float)
        out = np.abs(margins, out=np.empty_like(margins) if out is None else out)
        np.negative(out, out=out)
        np.exp(out, out=out)
        np.log1p(out, out=out)
        out += np.maximum(-margins, 0.0)
        return out if out.ndim else out[()]

    def derivative(self, margins: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        # −1/(1 + e^{m}) = −σ(−m): e^{m} = inf for m > 709 gives the correct −0, and np.exp is several
        # times faster than scipy's expit on the n-vectors of full-gradient methods (scripts/bench.py).
        # ``out`` (which may be ``margins`` itself) saves a fresh n-vector per call.
        margins = np.asarray(margins, dtype=float)
        with np.errstate(over="ignore"):
            out = np.exp(margins, out=np.empty_like(margins) if out is None else out)
        out += 1.0
        np.divide(-1.0, out, out=out)
        return out if out.ndim else out[()]

    def curvature(self, margins: np.ndarray) -> np.ndarray:
        """ℓ″(m) = σ(m)σ(−m) ∈ (0, 1/4]."""
        p = -self.derivative(margins)  # σ(−m)
        return p * (1.0 - p)


@dataclass(frozen=True)
class HingeLoss:
    """ℓ(m) = max(0, 1 − m) (chen_lee Sec 5.1, linear SVM); subgradient −1 for m < 1, else 0."""

    name: ClassVar[str] = "hinge"
    lipschitz: ClassVar[float] = 1.0
    smoothness: ClassVar[float | None] = None

    def value(self, margins: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return _into(out, np.maximum(0.0, 1.0 - margins))

    def derivative(self, margins: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return _into(out, -(np.asarray(margins) < 1.0).astype(float))


@dataclass(frozen=True)
class HuberHingeLoss:
    """Huberized hinge of chen_lee Sec 5.3 with parameter h (default 0.5).

    ℓ(m) = 1 − m for m < 1 − h;  (1 + h − m)²/(4h) for |1 − m| ≤ h;  0 otherwise.
    It is 1-Lipschitz and 1/(2h)-smooth.
    """

    h: float = 0.5
    name: ClassVar[str] = "huber_hinge"
    lipschitz: ClassVar[float] = 1.0

    def __post_init__(self) -> None:
        if not (np.isfinite(self.h) and self.h > 0):
            raise ValueError(f"Huber hinge parameter h must be finite and > 0, got {self.h}")

    @property
    def smoothness(self) -> float:
        return 1.0 / (2.0 * self.h)

    def value(self, margins: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        h = self.h
        quadratic = (1.0 + h - margins) ** 2 / (4.0 * h)
        return _into(out, np.where(margins < 1.0 - h, 1.0 - margins, np.where(margins <= 1.0 + h, quadratic, 0.0)))

    def derivative(self, margins: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        h = self.h
        slope = -(1.0 + h - margins) / (2.0 * h)
        return _into(out, np.where(margins < 1.0 - h, -1.0, np.where(margins <= 1.0 + h, slope, 0.0)))

    def curvature(self, margins: np.ndarray) -> np.ndarray:
        """ℓ″(m) = 1/(2h) on |1 − m| ≤ h, else 0 (one-sided at the two kinks)."""
        return np.where(np.abs(1.0 - np.asarray(margins, dtype=float)) <= self.h, 1.0 / (2.0 * self.h), 0.0)


def _into(out: np.ndarray | None, values: np.ndarray) -> np.ndarray:
    """``values``, copied into ``out`` when one is given (the losses' common ``out`` convention)."""
    if out is None:
        return values
    out[...] = values
    return out


LOSSES = {"logistic": LogisticLoss, "hinge": HingeLoss, "huber_hinge": HuberHingeLoss}


def make_loss(name: str, **params: float):
    """Build a loss by name; unknown names list the valid ones."""
    try:
        cls = LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}; valid: {', '.join(sorted(LOSSES))}") from None
    return cls(**params)
