"""The frontend: a kernel file's Python AST → Pipe IR (see :mod:`.ast_reader`)."""

from .ast_reader import (SPECIALIZABLE, FieldSpec, KernelInfo, PartitionInfo, PipeInfo,
                         kernel_signature, read_file, read_kernels, read_source)

__all__ = ["read_file", "read_source", "read_kernels", "kernel_signature", "SPECIALIZABLE",
           "KernelInfo", "PartitionInfo", "PipeInfo", "FieldSpec"]
