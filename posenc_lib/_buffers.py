"""Modules whose buffers are precomputed tables (cos/sin caches, sinusoidal tables, frequencies)."""

from __future__ import annotations

from torch import nn


class FixedPrecisionTables(nn.Module):
    """Buffers follow the module's device but keep their dtype.

    ``module.to(device)``, ``.cuda()`` and ``.to_empty(device=...)`` move the tables as usual.
    ``module.to(torch.bfloat16)``, ``.half()`` or ``.double()`` convert parameters only: a
    float32 cos/sin table or float64 frequencies rounded to bf16 would turn position 4000
    by a wrong angle, so the tables keep their precision and ``forward`` rounds its result
    to the input's dtype instead.
    """

    def _apply(self, fn, recurse=True):
        tables = {name: table for name, table in self._buffers.items() if table is not None}
        super()._apply(fn, recurse)
        for name, before in tables.items():
            after = self._buffers[name]
            if after is not None and after.dtype != before.dtype:
                self._buffers[name] = before.to(after.device)  # the unrounded table, on the new device
        return self
