"""What the dispatcher's rule needs to know of a GPU: its name, SM count, L2 size and per-SM limits,
read from the GPU, or from the recorded results file where there is none (so that the rule, and
gemvlab.explain, run on any machine)."""

from __future__ import annotations

from dataclasses import dataclass

from . import occupancy


@dataclass(frozen=True)
class Device:
    name: str
    sms: int
    l2_bytes: int
    limits: occupancy.SMLimits

    @classmethod
    def of(cls, index: int | None = None) -> Device:
        import torch

        p = torch.cuda.get_device_properties(index if index is not None else torch.cuda.current_device())
        return cls(p.name, p.multi_processor_count, p.L2_cache_size, occupancy.limits_of_device(index))

    @classmethod
    def recorded(cls, doc: dict | None = None) -> Device:
        """The GPU a results document was recorded on (the default: gemvlab's recorded H200)."""
        from ..results import schema

        m = (doc or schema.load())["machine"]
        return cls(m["gpu"], m["sm_count"], m["l2_bytes"], occupancy.SMLimits.from_dict(m["sm_limits"]))


_devices: dict = {}


def for_tensor(device) -> Device:
    """The Device of a tensor's device: its GPU's, or for a CPU (or meta) tensor the recorded GPU's."""
    import torch

    if device.type == "cuda":
        key = device.index if device.index is not None else torch.cuda.current_device()
    else:
        key = "recorded"
    if key not in _devices:
        _devices[key] = Device.of(key) if key != "recorded" else Device.recorded()
    return _devices[key]
