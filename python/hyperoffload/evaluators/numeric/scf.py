"""
`scf.if`: runs the region its condition picks in the enclosing frame, so
values from above are captured (and read with the same residency checks);
the values the region defines are local to it and dropped when it ends, its
`scf.yield` gives the results. A region not taken runs nothing: nothing in
it is read.

```mlir
%c = scf.if %p -> (tensor<4xf32>) {
  %y = arith.addf %x, %x : tensor<4xf32>   // %x from above: must be in HBM
  scf.yield %y : tensor<4xf32>
} else {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  scf.yield %z : tensor<4xf32>
}                                          // %y and %z are gone, %c holds one
```
"""

from collections.abc import Iterator

from xdsl.dialects import scf
from xdsl.ir import Region, SSAValue

from hyperoffload.evaluators.numeric.core import error
from hyperoffload.evaluators.numeric.frame import Frame


def _defined_in(region: Region) -> Iterator[SSAValue]:
    """Every value `region` defines: block arguments and results, nested ones too."""
    for block in region.blocks:
        yield from block.args
        for op in block.walk():
            yield from op.results
            for inner in op.regions:
                for inner_block in inner.blocks:
                    yield from inner_block.args


def run_if(frame: Frame, op: scf.IfOp) -> None:
    """Run the region of `op` its condition picks and bind the values it yields."""
    taken = op.true_region if bool(frame.read(op, op.cond)) else op.false_region
    if not taken.blocks:
        if op.output:
            raise error(op, "'scf.if' without an else region cannot yield values")
        return
    terminator = frame.interpreter.run_block(frame, taken.block)
    yielded = [frame.forward(terminator, v)[0] for v in terminator.operands]
    for value in _defined_in(taken):
        frame.device.pop(value, None)
        frame.remote.pop(value, None)
    for result, value in zip(op.output, yielded, strict=True):
        frame.bind(result, value)
