"""PyTorch reference programs of level1.kg's kernels, written as
KernelBench's level-1 models compute them (the obvious torch and
torch.nn.functional calls). `kgen bench --baseline` times these where a
kernel has one here; each takes the kernel's inputs in order and its dims
and params as keyword arguments, like the programs kgen emits."""

import torch
import torch.nn.functional as F


def kb_matmul(A, B, **kw):
    return (torch.matmul(A, B),)


kb_matmul_bf16 = kb_matmul


def kb_bmm(A, B, **kw):
    return (torch.bmm(A, B),)


def kb_matvec(A, x, **kw):
    return (torch.matmul(A, x),)


def kb_scale(A, s, **kw):
    return (A * s,)


def kb_tensor_matmul(A, B, **kw):
    return (torch.matmul(A, B),)


def kb_diag_matmul(a, B, **kw):
    return (torch.diag(a) @ B,)


def kb_matmul_at(A, B, **kw):
    return (torch.matmul(A.T, B),)


def kb_matmul_bt(A, B, **kw):
    return (torch.matmul(A, B.T),)


def kb_relu(X, **kw):
    return (torch.relu(X),)


def kb_leaky_relu(X, slope=0.01, **kw):
    return (F.leaky_relu(X, negative_slope=slope),)


def kb_sigmoid(X, **kw):
    return (torch.sigmoid(X),)


def kb_tanh(X, **kw):
    return (torch.tanh(X),)


def kb_swish(X, **kw):
    return (X * torch.sigmoid(X),)


def kb_gelu(X, **kw):
    return (F.gelu(X),)


def kb_gelu_tanh(X, **kw):
    return (F.gelu(X, approximate="tanh"),)


def kb_selu(X, **kw):
    return (torch.selu(X),)


def kb_hardsigmoid(X, **kw):
    return (F.hardsigmoid(X),)


def kb_softplus(X, **kw):
    return (F.softplus(X),)


def kb_softsign(X, **kw):
    return (F.softsign(X),)


def kb_hardtanh(X, **kw):
    return (F.hardtanh(X, min_val=-1.0, max_val=1.0),)


def kb_softmax(X, **kw):
    return (torch.softmax(X, dim=1),)


def kb_log_softmax(X, **kw):
    return (torch.log_softmax(X, dim=1),)


def kb_rmsnorm(X, eps=1e-5, **kw):
    rms = torch.sqrt(torch.mean(X**2, dim=1, keepdim=True) + eps)
    return (X / rms,)


def kb_l1norm(X, **kw):
    return (X / torch.sum(torch.abs(X), dim=1, keepdim=True),)


def kb_l2norm(X, **kw):
    return (X / torch.norm(X, p=2, dim=1, keepdim=True),)


def kb_layernorm(X, gamma, beta, eps=1e-5, **kw):
    return (F.layer_norm(X, X.shape[-1:], gamma, beta, eps),)


def kb_maxpool2d(X, **kw):
    return (F.max_pool2d(X, kernel_size=2, stride=2),)


def kb_sum_dim1(X, **kw):
    return (torch.sum(X, dim=1),)


def kb_mean_dim1(X, **kw):
    return (torch.mean(X, dim=1),)


def kb_max_dim1(X, **kw):
    return (torch.max(X, dim=1)[0],)


def kb_min_dim2(X, **kw):
    return (torch.min(X, dim=2)[0],)


def kb_argmax_dim1(X, **kw):
    return (torch.argmax(X, dim=1),)


def kb_conv2d_3x3(X, Wt, **kw):
    return (F.conv2d(X, Wt, padding=1),)


def kb_conv2d_1x1(X, Wt, **kw):
    return (F.conv2d(X, Wt[:, :, None, None]),)


def kb_depthwise3x3(X, Wt, **kw):
    return (F.conv2d(X, Wt[:, None], padding=1, groups=X.shape[1]),)


def kb_mse(P, T, **kw):
    return (F.mse_loss(P, T),)
