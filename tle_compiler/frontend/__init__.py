"""The frontend: a kernel file's Python source → kernel IR (build.py) → Pipe IR and KernelInfo
(protocol.py); entry points in :mod:`.ast_reader`."""

from .ast_reader import (SPECIALIZABLE, FieldSpec, KernelInfo, PartitionInfo, PipeInfo,
                         kernel_signature, read_file, read_kernels, read_kir, read_source)

__all__ = ["read_file", "read_source", "read_kernels", "read_kir", "kernel_signature",
           "SPECIALIZABLE", "KernelInfo", "PartitionInfo", "PipeInfo", "FieldSpec"]
