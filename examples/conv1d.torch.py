"""PyTorch reference programs of conv1d.kg's kernels: the torch.nn.functional
calls a user would write. `kgen bench --baseline` times these; each takes
the kernel's inputs in order and its dims and params as keyword arguments."""

import torch.nn.functional as F


def conv1d(X, Wt, stride=1, pad=0, **kw):
    return (F.conv1d(X, Wt, stride=stride, padding=pad),)


def conv_transpose1d(X, Wt, stride=1, pad=0, **kw):
    return (F.conv_transpose1d(X, Wt, stride=stride, padding=pad),)
