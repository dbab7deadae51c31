"""Affine functions with integer coefficients, and the weight matrices that compute them.

Every gadget of the compiler is written as ``Affine`` maps over one layer's values (the residual
stream or a hidden layer's units); ``matrix`` turns a set of them into a weight and a bias.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Affine:
    """``sum(coefficients[i] * x_i) + constant`` over one layer's values (residual or units)."""

    coefficients: dict[int, int] = field(default_factory=dict)
    constant: int = 0

    def __add__(self, other: Affine) -> Affine:
        merged = dict(self.coefficients)
        for index, value in other.coefficients.items():
            merged[index] = merged.get(index, 0) + value
        return Affine(merged, self.constant + other.constant)

    def scaled(self, factor: int) -> Affine:
        return Affine({i: factor * v for i, v in self.coefficients.items()},
                      factor * self.constant)

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scaled(-1)

    def shifted(self, offset: int) -> Affine:
        """The same function with every variable index moved by ``offset``."""
        return Affine({offset + i: v for i, v in self.coefficients.items()}, self.constant)


def matrix(rows: dict[int, Affine], shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The weight matrix and bias vector whose row i computes ``rows[i]`` (other rows 0)."""
    indices: tuple[list[int], list[int]] = ([], [])
    values: list[int] = []
    bias = np.zeros(shape[0])
    for row, affine in rows.items():
        indices[0].extend([row] * len(affine.coefficients))
        indices[1].extend(affine.coefficients)
        values.extend(affine.coefficients.values())
        bias[row] = affine.constant
    weight = np.zeros(shape)
    weight[indices] = values  # each (row, column) pair occurs once
    return weight, bias


def unit(index: int) -> Affine:
    return Affine({index: 1})


def constant(value: int) -> Affine:
    return Affine({}, value)
