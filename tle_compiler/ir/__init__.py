"""The Pipe IR: nodes, affine expressions, the text form (parser and printer), instantiation."""

from .expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from .nodes import (ACCESS_VERBS, NOLOC, READER_VERBS, VERBS, WRITER_VERBS, Access, Event, For, If,
                    Loc, Module, Param, Partition, Pipe, Program, Stmt, walk_accesses, walk_events,
                    walk_with_context)
