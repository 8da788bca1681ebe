# The language's scalar semantics where Triton's differ (docs/language.md).

import math

import triton
import triton.language as tl


@triton.jit
def kg_floordiv(a, b):
    # Integer division rounds toward negative infinity; Triton's // truncates.
    q = a // b
    return tl.where(((a % b) != 0) & ((a < 0) != (b < 0)), q - 1, q)


@triton.jit
def kg_floormod(a, b):
    # The remainder takes the divisor's sign; Triton's % takes the dividend's.
    r = a % b
    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


@triton.jit
def kg_fmod_floor(a, b):
    # x - floor(x / y) * y with a correctly rounded quotient: Triton's / of
    # f32 values is approximate (div.full.f32).
    if a.dtype == tl.float32:
        q = tl.div_rn(a, b)
    else:
        q = a / b
    return a - tl.floor(q) * b


@triton.jit
def kg_f2i(x, lo: tl.constexpr, hi: tl.constexpr):
    # Float to integer: truncation toward zero, saturating at the target's
    # range, NaN to 0.
    y = x.to(tl.float64)
    t = tl.where(y <= lo, lo, tl.where(y >= hi, hi, y.to(tl.int64)))
    return tl.where(y != y, 0, t)


@triton.jit
def kg_f2i32(x, lo: tl.constexpr, hi: tl.constexpr):
    # kg_f2i of an f32 to i8, u8 or i32, in 32 bits: the bounds are exact
    # in f32 but i32's top, 2^31 - 1, which rounds to 2^31, where the
    # clamp catches every value that would not fit.
    t = tl.where(x <= lo, lo, tl.where(x >= hi, hi, x.to(tl.int32)))
    return tl.where(x != x, 0, t)


@triton.jit
def kg_tf32(x):
    # Round f32 to TensorFloat-32: 10 mantissa bits, to nearest with ties
    # away from zero; NaN and infinities pass.
    u = x.to(tl.uint32, bitcast=True)
    r = (u + 0x1000) & 0xFFFFE000
    return tl.where((u & 0x7F800000) == 0x7F800000, u, r).to(tl.float32, bitcast=True)


@triton.jit
def kg_mul(a, b):
    return a * b


@triton.jit
def kg_max(a, b):
    # tl.max and tl.min drop NaN (their combine is maximum's default,
    # PropagateNan.NONE); kgen's max and min reductions keep it, as the
    # reference interpreter's do. Cast back: the maximum of 16-bit floats
    # is f32.
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL).to(a.dtype)


@triton.jit
def kg_min(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL).to(a.dtype)
