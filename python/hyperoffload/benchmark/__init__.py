"""
`hyperoffload-bench`: zoo workloads x memory policies x hardware presets,
side by side with the figures the HyperOffload seeds publish.

```python
from hyperoffload.benchmark.suite import run_suite
results = run_suite("quick", out=Path("bench-results"), work=Path("build/bench"), jobs=1)
```
"""
