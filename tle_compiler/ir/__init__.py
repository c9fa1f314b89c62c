"""The Pipe IR: nodes, affine expressions, the text form (parser and printer), instantiation."""

from .expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from .nodes import (NOLOC, READER_VERBS, VERBS, WRITER_VERBS, Event, For, If, Loc, Module, Param,
                    Partition, Pipe, Program, Stmt, walk_events, walk_with_context)
