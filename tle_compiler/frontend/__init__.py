"""The frontend: a kernel file's Python AST → Pipe IR (see :mod:`.ast_reader`)."""

from .ast_reader import (FieldSpec, KernelInfo, PartitionInfo, PipeInfo, read_file, read_kernels,
                         read_source)

__all__ = ["read_file", "read_source", "read_kernels", "KernelInfo", "PartitionInfo", "PipeInfo",
           "FieldSpec"]
