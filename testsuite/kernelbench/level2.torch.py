"""PyTorch reference programs of level2.kg's kernels, written as
KernelBench's level-2 models compute them: nn.Linear (F.linear with W of
shape [out, in]) or nn.Conv2d, then the activations one call each. `kgen
bench --baseline` times these; each takes the kernel's inputs in order and
its dims and params as keyword arguments."""

import torch
import torch.nn.functional as F


def kb2_gemm_bias_relu(X, Wt, bias, **kw):
    return (torch.relu(F.linear(X, Wt, bias)),)


def kb2_gemm_scale_gelu(X, Wt, bias, divisor=10.0, **kw):
    return (F.gelu(F.linear(X, Wt, bias) / divisor),)


def kb2_gemm_sigmoid_residual(X, Wt, bias, scale=2.0, **kw):
    g = F.linear(X, Wt, bias)
    return (torch.sigmoid(g) * scale + g,)


def kb2_gemm_rowsum(X, Wt, bias, **kw):
    return (torch.sum(F.linear(X, Wt, bias), dim=1),)


def kb2_gemm_mul_leaky(X, Wt, bias, multiplier=2.0, slope=0.1, **kw):
    return (F.leaky_relu(F.linear(X, Wt, bias) * multiplier, negative_slope=slope),)


def kb2_gemm_swish_scale(X, Wt, bias, scale=2.0, **kw):
    g = F.linear(X, Wt, bias)
    return (g * torch.sigmoid(g) * scale,)


def kb2_gemm_mish_mish(X, Wt, bias, **kw):
    return (F.mish(F.mish(F.linear(X, Wt, bias))),)


def kb2_gemm_gelu_softmax(X, Wt, bias, **kw):
    return (torch.softmax(F.gelu(F.linear(X, Wt, bias)), dim=1),)


def kb2_gemm_scale_residual_bf16(X, Wt, bias, scale=0.5, **kw):
    g = F.linear(X, Wt, bias)
    return (g * scale + g,)


def kb2_conv_relu_bias(X, Wt, bias, **kw):
    return (torch.relu(F.conv2d(X, Wt)) + bias[:, None, None],)


def kb2_conv_mish_mish(X, Wt, bias, **kw):
    return (F.mish(F.mish(F.conv2d(X, Wt, bias))),)
