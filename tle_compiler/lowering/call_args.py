"""The arguments of the ``tl`` calls the translator lowers, bound as Triton 3.6 binds them: the
one binding of tle_compiler/language/call_args.py, which the protocol view (frontend) applies
too, so that tle-dump refuses at the line what --gluon would."""

from __future__ import annotations

from ..language.call_args import (CACHE_HINTS, DEFAULTS, MEMORY_DEFAULTS,  # noqa: F401
                                  PARAMS, POSITIONAL_KWARGS, READ, REQUIRED, UNARY,
                                  CallArgError, at_default, bind, check_memory_keywords,
                                  literal_of, memory_kwargs)
