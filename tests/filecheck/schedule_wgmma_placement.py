# RUN: tle-dump -p schedule-wgmma --no-locations %S/inputs/wgmma_placement.py
# Where schedule-wgmma puts each wait: on the innermost node that carries attributes (the
# partition, a loop, an operation, an event), `place` "before" / "after" the node at `path` below
# it, or at the "end" of the statement list at `path`; a path goes through the nodes without
# attributes (a name that is read, an `if`, a branch). Dependencies are the partition's names.
# The loader issues no wgmma: its partition has no waits of its own, its loop none at all.
# CHECK: partition loader default
# CHECK: wgmma_waits = ()} {
# CHECK: for t in range(0, NT, 1) {
# The wgmma still in flight at the end of the partition (`last`, never read) is waited for there.
# CHECK: partition attend
# CHECK: wgmma_waits = (WgmmaWait(pending = 0, deps = ('last',), why = 'end of the partition', line = 35, place = 'end', path = 'body'),)} {
# The loop holds four: before it (the wgmma before the loop), after the read of `s` in
# `acc = acc + s` (its third statement's value's right operand), at the end of the `if` branch
# (its fourth statement's `then`), and at the end of its body (the back-edge).
# CHECK-NEXT: qres = q.reader.wait(0)
# CHECK: for t in range(0, NT, 1) attrs {wgmma_waits = (WgmmaWait(pending = 0, deps = ('acc',), why = 'loop entry: no wgmma in flight across a loop boundary', line = 40, place = 'before', path = '')
# CHECK: WgmmaWait(pending = 0, deps = ('s',), why = 's is read', line = 43, place = 'after', path = 'body[2].value.rhs')
# CHECK: WgmmaWait(pending = 0, deps = ('acc',), why = 'end of the if branch', line = 44, place = 'end', path = 'body[3].then')
# CHECK: WgmmaWait(pending = 0, deps = ('acc',), why = 'loop back-edge', line = 40, place = 'end', path = 'body'))} {
# The release waits for nothing (the only wgmma reading the slot, `s`, was waited for).
# CHECK: kv.reader.release(t)
# CHECK-NOT: WgmmaWait(
# CHECK: acc = tl.dot(qq, tl.trans(qq), acc)
