"""PyTorch reference programs of conv2d.kg's kernels: the torch.nn.functional
calls a user would write. `kgen bench --baseline` times these; each takes
the kernel's inputs in order and its dims and params as keyword arguments."""

import torch.nn.functional as F


def conv2d(X, Wt, stride=1, pad=0, **kw):
    return (F.conv2d(X, Wt, stride=stride, padding=pad),)


def conv2d_bias(X, Wt, bias, stride=1, pad=0, dil=1, **kw):
    return (F.conv2d(X, Wt, bias, stride=stride, padding=pad, dilation=dil),)


def conv2d_nhwc(X, Wt, stride=1, pad=0, **kw):
    # Channels-last tensors seen as NCHW: cuDNN runs them in that layout,
    # and the result, permuted back, is NHWC without a copy.
    y = F.conv2d(X.permute(0, 3, 1, 2), Wt.permute(0, 3, 1, 2), stride=stride, padding=pad)
    return (y.permute(0, 2, 3, 1),)


def conv_transpose2d(X, Wt, stride=1, pad=0, **kw):
    return (F.conv_transpose2d(X, Wt, stride=stride, padding=pad),)
